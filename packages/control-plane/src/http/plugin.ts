import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { defaultConfig, isPaddockError } from "@paddock/common";
import { alwaysHeld, type Broadcasts, type Db, type Lease } from "@paddock/db";
import { e2bApi } from "@paddock/e2b";
import {
  installErrorHandling,
  installJsonBodies,
  installQueryChecks,
  installValidation,
} from "@paddock/http";
import {
  type SandboxOperations,
  type TemplateBuilds,
  type TemplateCatalog,
  UsageLedger,
  type VolumeOperations,
} from "@paddock/runtime";
import { AuditTrail } from "../audit/audit-trail.js";
import { auditRoutes } from "../audit/routes.js";
import { Billing, type BillingSettings } from "../billing/billing.js";
import { BillingWebhook } from "../billing/billing-webhook.js";
import { billingRoutes, billingWebhookRoutes } from "../billing/routes.js";
import { AgentKeys } from "../identity/agent-keys.js";
import { authRoutes } from "../identity/auth-routes.js";
import { Identity, type Principal } from "../identity/identity.js";
import { keyRoutes } from "../identity/key-routes.js";
import { LoginThrottle } from "../identity/login-throttle.js";
import { type McpEndpoint, mcpRoutes } from "../mcp/routes.js";
import { MemoryStore } from "../memory/memory-store.js";
import { memoryRoutes } from "../memory/routes.js";
import { paymentOperationRoutes } from "../payments/operation-routes.js";
import { PaymentCredentials } from "../payments/payment-credentials.js";
import { PaymentOperations } from "../payments/payment-operations.js";
import { paymentRoutes } from "../payments/routes.js";
import { AccountLimits, type LimitSettings } from "../plans/account-limits.js";
import { codeRoutes } from "../sandboxes/routes/code.js";
import { diagnosticRoutes } from "../sandboxes/routes/diagnostics.js";
import { endpointRoutes } from "../sandboxes/routes/endpoints.js";
import { fileRoutes } from "../sandboxes/routes/files.js";
import { metricsRoutes } from "../sandboxes/routes/metrics.js";
import { networkPolicyRoutes } from "../sandboxes/routes/network-policy.js";
import { sandboxEventRoutes } from "../sandboxes/routes/sandbox-events.js";
import { sandboxRoutes } from "../sandboxes/routes/sandboxes.js";
import { terminalRoutes } from "../sandboxes/routes/terminal.js";
import { secretRoutes } from "../secrets/routes.js";
import { SandboxSecrets } from "../secrets/sandbox-secrets.js";
import { SecretStore } from "../secrets/secret-store.js";
import { templateRoutes } from "../templates/routes.js";
import { usageRoutes } from "../usage/routes.js";
import { defaultUsagePolicy, Usage, type UsagePolicy } from "../usage/usage.js";
import { volumeRoutes } from "../volumes/routes.js";
import { authorize } from "./auth-hook.js";
import { RateCounters } from "./rate-limit.js";

export interface ControlPlaneOptions {
  db: Db;
  sandboxes: SandboxOperations;
  /** The volume registry (decision 0192). */
  volumes: VolumeOperations;
  templates: TemplateCatalog;
  /** Accounts' template builds (decision 0198). */
  templateBuilds: TemplateBuilds;
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
  /** Serves `/mcp` (the Model Context Protocol) for authenticated callers; without it there is no `/mcp`. */
  mcp?: McpEndpoint;
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
  const audit = new AuditTrail(options.db, counters, app.log);
  // Every refusal for an account limit, on every route here, reaches the audit log (throttled).
  app.addHook("onError", async (request, _reply, error) => {
    if (isPaddockError(error)) await audit.limitHit(request, error);
  });
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
  // A resume on use is refused for an account out of minutes, as an asked one is (402); every
  // resume let through is counted in the account's usage.
  options.sandboxes.checkResumes(async (sandbox) => {
    if (sandbox.owner === null) return;
    await usage.assertCanRun(sandbox.owner, "resume");
    await usage.countResume(sandbox.owner);
  });
  // Routes registered in one explicit list.
  await app.register(authRoutes, { identity, audit });
  await app.register(keyRoutes, { identity, audit });
  await app.register(auditRoutes, { identity, log: audit.log });
  await app.register(sandboxRoutes, {
    identity,
    sandboxes: options.sandboxes,
    templates: options.templates,
    secrets: new SandboxSecrets(secrets, options.sandboxes),
    usage,
    limits,
    audit,
  });
  await app.register(volumeRoutes, { identity, volumes: options.volumes, limits });
  await app.register(templateRoutes, { identity, templateBuilds: options.templateBuilds, limits, audit });
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
  await app.register(secretRoutes, { identity, secrets, audit });
  await app.register(memoryRoutes, { identity, memory: new MemoryStore(options.db) });
  await app.register(usageRoutes, { identity, usage, limits });
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
  await app.register(paymentRoutes, { identity, credentials: paymentCredentials, agentKeys, audit });
  await app.register(paymentOperationRoutes, {
    identity,
    agentKeys,
    operations: new PaymentOperations(paymentCredentials, agentKeys),
  });
  if (options.mcp) await app.register(mcpRoutes, { identity, endpoint: options.mcp });
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
    volumes: options.volumes,
    templates: options.templates,
    secretKey: options.secretKey,
    publicUrl: options.publicUrl,
    authenticate: (credential) => authorize(identity, credential, "sandboxes"),
    // The caller is what `authorize` answered: a whole Principal.
    recordEvent: (caller, address, type, sandboxId) =>
      audit.recordFor(
        caller as Principal,
        address,
        type,
        { type: "sandbox", id: sandboxId },
        { surface: "e2b" },
      ),
    assertCanRun: (accountId, action) => usage.assertCanRun(accountId, action),
    quotaOf: (accountId) => limits.sandboxQuota(accountId),
    chargeCreate: (accountId, credential) => limits.charge("creates", accountId, credential),
    // The plan's idle policy, as the control plane's creates get it (0: never).
    lifecycleDefaults: (accountId) => limits.lifecycleDefaults(accountId),
    templateBuilds: {
      builds: options.templateBuilds,
      quotaOf: (accountId) => limits.templateQuota(accountId),
    },
  });
};
