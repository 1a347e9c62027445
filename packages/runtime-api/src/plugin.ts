import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { illFormedString } from "@paddock/common";
import { echoRequestId, installErrorHandling, installQueryChecks, jsonText, notUnicode } from "@paddock/http";
import type { SandboxOperations, SnapshotOperations } from "@paddock/runtime";
import { requireApiKey } from "./auth.js";
import { endpointProxy, runtimeProxyRoute } from "./proxy.js";
import { diagnosticContentRoutes, diagnosticRoutes } from "./routes/diagnostics.js";
import { endpointRoutes } from "./routes/endpoints.js";
import { metricsRoutes } from "./routes/metrics.js";
import { sandboxRoutes } from "./routes/sandboxes.js";
import { snapshotRoutes } from "./routes/snapshots.js";

export interface RuntimeApiOptions {
  sandboxes: SandboxOperations;
  snapshots: SnapshotOperations;
  /** Undefined only when the operator explicitly runs the API open. */
  apiKey: string | undefined;
  /** Base URL clients reach this server at (known once it listens). */
  publicUrl: () => string;
  secretKey: string;
  diagnosticsInlineLimitBytes: number;
}

/** The /v1 lifecycle and diagnostics API (register with `prefix: "/v1"`). */
export const runtimeApi: FastifyPluginAsyncTypebox<RuntimeApiOptions> = async (app, options) => {
  installErrorHandling(app, "message");
  installQueryChecks(app);
  app.addHook("onRequest", async (request, reply) => echoRequestId(request, reply));
  // JSON only: a text body is refused with 415 rather than validated as a string.
  app.removeContentTypeParser("text/plain");
  app.addContentTypeParser("application/merge-patch+json", { parseAs: "buffer" }, (_request, body, done) => {
    const text = jsonText(body as Buffer);
    if (typeof text !== "string") return done(text, undefined);
    try {
      const value = JSON.parse(text);
      const illFormed = illFormedString(value);
      done(illFormed === undefined ? null : notUnicode(illFormed), value);
    } catch {
      const error = Object.assign(new Error("invalid JSON"), {
        statusCode: 400,
        code: "FST_ERR_CTP_INVALID_JSON_BODY",
      });
      done(error, undefined);
    }
  });
  const diagnostics = {
    sandboxes: options.sandboxes,
    publicUrl: options.publicUrl,
    secretKey: options.secretKey,
    inlineLimitBytes: options.diagnosticsInlineLimitBytes,
  };

  // Routes that need the API key: registered in one explicit list.
  await app.register(async (authenticated) => {
    authenticated.addHook("onRequest", async (request) => requireApiKey(request, options.apiKey));
    await authenticated.register(sandboxRoutes, { sandboxes: options.sandboxes });
    await authenticated.register(snapshotRoutes, { snapshots: options.snapshots });
    await authenticated.register(endpointRoutes, diagnostics);
    await authenticated.register(diagnosticRoutes, diagnostics);
    await authenticated.register(metricsRoutes);
  });
  // Routes that authorise themselves: signed diagnostics links, and the proxy (API key or access token).
  await app.register(diagnosticContentRoutes, diagnostics);
  await app.register(endpointProxy, {
    route: runtimeProxyRoute({
      sandboxes: options.sandboxes,
      apiKey: options.apiKey,
      secretKey: options.secretKey,
      mountPath: app.prefix,
    }),
  });
};
