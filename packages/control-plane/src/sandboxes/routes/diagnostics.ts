import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { SandboxOperations } from "@paddock/runtime";
import { authenticate, principalOf } from "../../http/auth-hook.js";
import { errorResponses } from "../../http/error-schemas.js";
import type { Identity } from "../../identity/identity.js";
import { Diagnostics, DiagnosticsQuery } from "../schemas/diagnostics.js";
import { SandboxParams } from "../schemas/sandboxes.js";

const descriptions = {
  logs: "The sandbox's output (`scope=container`), its lifecycle record (`lifecycle`), or both (`all`, the default).",
  events:
    "The sandbox's lifecycle events (`scope=lifecycle`), its container's state in the engine (`runtime`), or both (`all`, the default).",
};

/** Diagnostic text of a sandbox: what the runtime API's `/v1` diagnostics give, as plain JSON. */
export const diagnosticRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  sandboxes: SandboxOperations;
}> = async (app, { identity, sandboxes }) => {
  app.addHook("onRequest", authenticate(identity, "sandboxes"));
  for (const kind of ["logs", "events"] as const) {
    app.get(
      `/sandboxes/:id/diagnostics/${kind}`,
      {
        schema: {
          tags: ["diagnostics"],
          description: descriptions[kind],
          params: SandboxParams,
          querystring: DiagnosticsQuery,
          response: { 200: Diagnostics, ...errorResponses },
        },
      },
      async (request) =>
        sandboxes.diagnostics(
          request.params.id,
          kind,
          request.query.scope ?? "all",
          principalOf(request).accountId,
        ),
    );
  }
};
