import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { defaultConfig } from "@paddock/common";
import { alwaysHeld, type Broadcasts, type Db, type Lease } from "@paddock/db";
import { e2bApi } from "@paddock/e2b";
import { type SandboxOperations, type Template, UsageLedger } from "@paddock/runtime";
import {
  installErrorHandling,
  installJsonBodies,
  installQueryChecks,
  installValidation,
} from "@paddock/runtime-api";
import { AccountLimits, type LimitSettings } from "./account-limits.js";
import { AgentKeys } from "./agent-keys.js";
import { authorize } from "./auth-hook.js";
import { Billing, type BillingSettings } from "./billing.js";
import { BillingWebhook } from "./billing-webhook.js";
import { Identity } from "./identity.js";
import { LoginThrottle } from "./login-throttle.js";
import { MemoryStore } from "./memory-store.js";
import { PaymentCredentials } from "./payment-credentials.js";
import { PaymentOperations } from "./payment-operations.js";
import { RateCounters } from "./rate-limit.js";
import { authRoutes } from "./routes/auth.js";
import { billingRoutes, billingWebhookRoutes } from "./routes/billing.js";
import { codeRoutes } from "./routes/code.js";
import { diagnosticRoutes } from "./routes/diagnostics.js";
import { endpointRoutes } from "./routes/endpoints.js";
import { fileRoutes } from "./routes/files.js";
import { keyRoutes } from "./routes/keys.js";
import { memoryRoutes } from "./routes/memory.js";
import { metricsRoutes } from "./routes/metrics.js";
import { networkPolicyRoutes } from "./routes/network-policy.js";
import { paymentOperationRoutes } from "./routes/payment-operations.js";
import { paymentRoutes } from "./routes/payments.js";
import { sandboxEventRoutes } from "./routes/sandbox-events.js";
import { sandboxRoutes } from "./routes/sandboxes.js";
import { secretRoutes } from "./routes/secrets.js";
import { terminalRoutes } from "./routes/terminal.js";
import { usageRoutes } from "./routes/usage.js";
import { SandboxSecrets } from "./sandbox-secrets.js";
import { SecretStore } from "./secret-store.js";
import { defaultUsagePolicy, Usage, type UsagePolicy } from "./usage.js";

export interface ControlPlaneOptions {
  db: Db;
  sandboxes: SandboxOperations;
  templates: Map<string, Template>;
  secretKey: string;
  /** Base URL clients reach this server at (known once it listens). */
  publicUrl: () => string;
  /** Free plan minutes and how often limits are enforced; defaults to 100 minutes, every 5 s. */
  usage?: UsagePolicy;
  /** Messages between replicas (a revoked key); default: none, as for one process. */
  broadcasts?: Broadcasts;
  /** Held by the one replica that pauses sandboxes of accounts past their minutes; default: this process. */
  enforcementLease?: Lease;
  /** The platform's Stripe account (`[billing]`); without it checkout and the webhook answer 503. */
  billing?: BillingSettings;
  /** Stripe's API address for the accounts' own keys (`[payments] stripe_api_base`). */
  paymentsApiBase?: string;
  /** Most bytes one file upload may carry (`[server] max_upload_bytes`); 0: no limit. */
  maxUploadBytes?: number;
  /** Plan limits and request rates (`[plans]`, `[rate_limits]`); default: the configuration's defaults. */
  limits?: LimitSettings;
  /** The server's account limits, when it made them for other surfaces too (E2B's gateway); else made here. */
  accountLimits?: AccountLimits;
}

/** The customer-facing control plane (SPEC.md §4.1): errors as `{code, detail}`. */
export const controlPlane: FastifyPluginAsyncTypebox<ControlPlaneOptions> = async (app, options) => {
  // Its own validation and error rendering, whatever the host server sets: bodies checked as sent,
  // extra properties refused (never stripped), errors as `{code, detail}`.
  installValidation(app);
  installErrorHandling(app, "detail", { notFound: false });
  installJsonBodies(app);
  installQueryChecks(app);
  app.removeContentTypeParser("text/plain");
  const settings = options.limits ?? defaultConfig;
  const counters = new RateCounters(options.db, options.secretKey);
  const limits = options.accountLimits ?? new AccountLimits(options.db, counters, settings);
  const identity = new Identity(options.db, {
    limits,
    loginThrottle: new LoginThrottle(options.db, counters, options.secretKey, settings.rate_limits),
    broadcasts: options.broadcasts,
  });
  // Ended windows are of no use: every replica clears them now and then (deleting twice is harmless).
  const pruning = setInterval(
    () => counters.prune().catch((error) => app.log.warn({ err: error }, "pruning rate windows failed")),
    60_000,
  );
  pruning.unref();
  app.addHook("onClose", async () => clearInterval(pruning));
  const secrets = new SecretStore(options.db, options.secretKey);
  const usage = new Usage(
    options.db,
    new UsageLedger(options.db),
    options.sandboxes,
    options.usage ?? defaultUsagePolicy,
    app.log,
    options.enforcementLease ?? alwaysHeld("plan-enforcement"),
  );
  usage.start();
  app.addHook("onClose", () => usage.stop());
  // Routes registered in one explicit list.
  await app.register(authRoutes, { identity });
  await app.register(keyRoutes, { identity });
  await app.register(sandboxRoutes, {
    identity,
    sandboxes: options.sandboxes,
    templates: options.templates,
    secrets: new SandboxSecrets(secrets, options.sandboxes),
    usage,
    limits,
  });
  await app.register(sandboxEventRoutes, { identity, sandboxes: options.sandboxes });
  await app.register(metricsRoutes, { identity, sandboxes: options.sandboxes });
  await app.register(diagnosticRoutes, { identity, sandboxes: options.sandboxes });
  await app.register(fileRoutes, {
    identity,
    sandboxes: options.sandboxes,
    limits,
    maxUploadBytes: options.maxUploadBytes ?? defaultConfig.server.max_upload_bytes,
  });
  await app.register(codeRoutes, { identity, sandboxes: options.sandboxes, limits });
  await app.register(terminalRoutes, { identity, sandboxes: options.sandboxes, limits });
  await app.register(networkPolicyRoutes, { identity, sandboxes: options.sandboxes });
  await app.register(secretRoutes, { identity, secrets });
  await app.register(memoryRoutes, { identity, memory: new MemoryStore(options.db) });
  await app.register(usageRoutes, { identity, usage });
  await app.register(billingRoutes, {
    identity,
    billing: new Billing({
      db: options.db,
      settings: options.billing,
      publicUrl: options.publicUrl,
      log: app.log,
      includedMinutes: (plan) => usage.includedMinutes(plan),
    }),
  });
  await app.register(billingWebhookRoutes, { webhook: new BillingWebhook(options.db, options.billing) });
  const paymentCredentials = new PaymentCredentials(
    options.db,
    options.secretKey,
    options.paymentsApiBase ?? "https://api.stripe.com",
  );
  const agentKeys = new AgentKeys(options.db);
  await app.register(paymentRoutes, { identity, credentials: paymentCredentials, agentKeys });
  await app.register(paymentOperationRoutes, {
    identity,
    agentKeys,
    operations: new PaymentOperations(paymentCredentials, agentKeys),
  });
  await app.register(endpointRoutes, {
    identity,
    sandboxes: options.sandboxes,
    secretKey: options.secretKey,
    publicUrl: options.publicUrl,
  });
  // E2B's REST API, for E2B's SDKs: the same accounts, keys (scoped to sandboxes or unscoped) and plans.
  await app.register(e2bApi, {
    prefix: "/e2b",
    sandboxes: options.sandboxes,
    templates: options.templates,
    secretKey: options.secretKey,
    publicUrl: options.publicUrl,
    authenticate: (credential) => authorize(identity, credential, "sandboxes"),
    assertCanRun: (accountId, action) => usage.assertCanRun(accountId, action),
    quotaOf: (accountId) => limits.sandboxQuota(accountId),
    chargeCreate: (accountId, credential) => limits.charge("creates", accountId, credential),
  });
};
