import { clientErrorAnswer, type ErrorShape, type Logger, type PaddockConfig } from "@paddock/common";
import {
  AccountLimits,
  controlPlane,
  publicEndpointRoute,
  RateCounters,
  registerOpenApi,
  routeUpgrade,
} from "@paddock/control-plane";
import { installE2bGateway } from "@paddock/e2b";
import {
  frameworkErrorHandler,
  installErrorHandling,
  installJsonBodies,
  installValidation,
} from "@paddock/http";
import { serveMcpHttp, surfacesOfScope } from "@paddock/mcp";
import { openRuntimeStack, type RuntimeStack, type RuntimeStackOptions } from "@paddock/runtime";
import { attachUpgradeProxy, runtimeApi, runtimeProxyRoute } from "@paddock/runtime-api";
import "@fastify/swagger";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { type ResolvedApiKey, resolveApiKey } from "./api-key.js";
import { serveDashboard } from "./dashboard.js";
import { referencePage } from "./reference-page.js";

export interface ServerOptions {
  config: PaddockConfig;
  logger: Logger;
  /** Create `<data_dir>/api-key` when no key is configured. */
  generateKey?: boolean;
  /** The customer-facing control plane joins the runtime API unless this is false (`paddock runtime serve`). */
  controlPlane?: boolean;
  stack?: RuntimeStackOptions;
}

/** One route the server registered: its method and URL pattern (`:param`s, `*`). */
export interface RegisteredRoute {
  method: string;
  url: string;
}

export interface PaddockServer {
  app: FastifyInstance;
  /** Every route registered, WebSocket and streaming ones included (they are GET routes too). */
  routes: readonly RegisteredRoute[];
  stack: RuntimeStack;
  apiKey: ResolvedApiKey;
  /** Base URL clients use (server.public_url, or the listening address). */
  url: string;
  close(): Promise<void>;
}

/** Builds Paddock's HTTP server over a freshly opened runtime stack, listening on the configured address. */
export async function startServer(options: ServerOptions): Promise<PaddockServer> {
  const { config, logger } = options;
  const apiKey = resolveApiKey(config, options.generateKey ?? false);
  if (!apiKey.key)
    logger.warn("the runtime API runs WITHOUT authentication (server.allow_unauthenticated = true)");
  const stack = await openRuntimeStack(config, logger, options.stack);
  // Each surface keeps its error shape, also for what the router and the HTTP parser refuse:
  // /v1 answers `{code, message}`, /e2b E2B's `{code: <status>, message}`, the control plane
  // (everything else, when served) `{code, detail}`.
  const withControlPlane = options.controlPlane !== false;
  const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  const shapeFor = (path: string): ErrorShape =>
    !withControlPlane || under(path, "/v1") ? "message" : under(path, "/e2b") ? "status" : "detail";
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    // request.ip is the socket's address unless the operator names the proxies in front.
    trustProxy: config.server.trusted_proxies.length > 0 ? config.server.trusted_proxies : false,
    frameworkErrors: frameworkErrorHandler(shapeFor),
    clientErrorHandler: (error, socket) => {
      if ((error as NodeJS.ErrnoException).code === "ECONNRESET" || socket.destroyed) return;
      if (!socket.writable) return socket.destroy();
      socket.end(clientErrorAnswer(error, shapeFor), () => socket.destroy());
    },
  });
  const routes: RegisteredRoute[] = [];
  // Before anything registers: tests sweep every route with another account's ids.
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  installValidation(app);
  installJsonBodies(app);
  let url = config.server.public_url;
  /** This server's own address, which MCP tools call: never leaves the host, whatever public_url says. */
  let ownUrl = "";
  try {
    installErrorHandling(app, shapeFor(""), { logger });
    // Before any route is registered: E2B's in-sandbox traffic is told apart by its headers or
    // host, whatever its path, and never reaches the routes.
    // One account's limits for every surface: the control plane, E2B's API and E2B's gateway.
    const accountLimits = new AccountLimits(
      stack.database.db,
      new RateCounters(stack.database.db, stack.secretKey),
      config,
    );
    const e2bGateway = withControlPlane
      ? installE2bGateway(app, {
          sandboxes: stack.sandboxes,
          secretKey: stack.secretKey,
          publicUrl: () => url,
          prefix: "/e2b",
          chargeCall: (call, accountId, credential) => accountLimits.charge(call, accountId, credential),
        })
      : undefined;
    app.get("/health", async () => ({ status: "ok" }));
    await app.register(runtimeApi, {
      prefix: "/v1",
      sandboxes: stack.sandboxes,
      snapshots: stack.snapshots,
      apiKey: apiKey.key,
      publicUrl: () => url,
      secretKey: stack.secretKey,
      diagnosticsInlineLimitBytes: config.server.diagnostics_inline_limit_bytes,
    });
    const proxyRoutes = [
      // First: the gateway is told apart by headers or host, whatever the path.
      ...(e2bGateway ? [e2bGateway] : []),
      runtimeProxyRoute({
        sandboxes: stack.sandboxes,
        apiKey: apiKey.key,
        secretKey: stack.secretKey,
        mountPath: "/v1",
      }),
    ];
    if (options.controlPlane !== false) {
      await registerOpenApi(app);
      await app.register(controlPlane, {
        db: stack.database.db,
        sandboxes: stack.sandboxes,
        volumes: stack.volumes,
        templates: stack.templates,
        templateBuilds: stack.templateBuilds,
        secretKey: stack.secretKey,
        publicUrl: () => url,
        usage: {
          freeMinutes: config.plans.free_minutes,
          enforceIntervalMs: config.usage.enforce_interval_seconds * 1000,
        },
        enforcementLease: stack.leases.lease("plan-enforcement"),
        broadcasts: stack.broadcasts,
        billing: {
          stripeSecretKey: config.billing.stripe_secret_key,
          webhookSecret: config.billing.stripe_webhook_secret,
          apiBase: config.billing.stripe_api_base,
          proPriceId: config.billing.pro_price_id,
          successUrl: config.billing.success_url,
          cancelUrl: config.billing.cancel_url,
          webhookToleranceSeconds: config.billing.webhook_tolerance_seconds,
        },
        paymentsApiBase: config.payments.stripe_api_base,
        maxUploadBytes: config.server.max_upload_bytes,
        limits: config,
        accountLimits,
        // MCP's tools call this server's own API with the caller's credential, so every
        // authorization, limit and count applies as it does to any client.
        mcp: (request, response, body, caller) =>
          serveMcpHttp(request, response, body, {
            connection: { baseUrl: ownUrl, apiKey: caller.credential },
            allowed: surfacesOfScope(caller.scope),
          }),
      });
      proxyRoutes.push(publicEndpointRoute(stack.sandboxes, stack.secretKey));
      app.get("/openapi.json", async () => app.swagger());
      app.get("/docs", async (_request, reply) => reply.type("text/html; charset=utf-8").send(referencePage));
      await serveDashboard(app);
    }
    attachUpgradeProxy(app.server, proxyRoutes, withControlPlane ? routeUpgrade(app) : undefined);
    const address = await app.listen({ host: config.server.host, port: config.server.port });
    ownUrl = address.replace("0.0.0.0", "127.0.0.1").replace("[::]", "127.0.0.1");
    url ||= ownUrl;
  } catch (error) {
    await app.close().catch(() => undefined);
    await stack.close();
    throw error;
  }
  return {
    app,
    routes,
    stack,
    apiKey,
    get url() {
      return url;
    },
    async close() {
      await app.close();
      await stack.close();
    },
  };
}
