import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { PaddockError } from "@paddock/common";
import { callEgressPolicy, type SandboxOperations } from "@paddock/runtime";
import type { FastifyRequest } from "fastify";
import { authenticate, principalOf } from "../../http/auth-hook.js";
import { errorResponses } from "../../http/error-schemas.js";
import { ControlPlaneErrors } from "../../http/errors.js";
import type { Identity } from "../../identity/identity.js";
import { EnforcedPolicy, PolicyPatch, PolicyRemoval } from "../schemas/network-policy.js";
import { SandboxParams } from "../schemas/sandboxes.js";

/**
 * A sandbox's live outbound policy, read and changed through its egress sidecar (the same calls
 * the runtime API offers through endpoint resolution, with the sidecar's token kept server-side).
 */
export const networkPolicyRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  sandboxes: SandboxOperations;
}> = async (app, options) => {
  const { sandboxes } = options;
  app.addHook("onRequest", authenticate(options.identity, "sandboxes"));

  /**
   * Calls the sidecar of the sandbox a request names, for its owner only. `sentAt` is where the
   * caller put what is sent as the sidecar's body, so a refusal names the caller's own field.
   */
  async function sidecar(
    request: FastifyRequest & { params: { id: string } },
    method: "GET" | "PATCH" | "DELETE",
    body?: unknown,
    sentAt = "body",
  ) {
    const owner = principalOf(request).accountId;
    const sandbox = await sandboxes.get(request.params.id, owner);
    if (!sandbox.networkPolicy) {
      throw new PaddockError(
        ControlPlaneErrors.networkPolicyAbsent,
        "this sandbox was created without a networkPolicy: its egress is not filtered and has no policy to change",
      );
    }
    return callEgressPolicy(sandboxes, sandbox, owner, method, body, sentAt);
  }

  const common = {
    tags: ["network policy"],
    params: SandboxParams,
    response: { 200: EnforcedPolicy, ...errorResponses },
  };
  app.get("/sandboxes/:id/network-policy", { schema: common }, (request) => sidecar(request, "GET"));
  app.patch("/sandboxes/:id/network-policy", { schema: { ...common, body: PolicyPatch } }, (request) =>
    sidecar(request, "PATCH", request.body.egress, "body.egress"),
  );
  app.delete(
    "/sandboxes/:id/network-policy",
    { schema: { ...common, querystring: PolicyRemoval } },
    (request) => sidecar(request, "DELETE", request.query.target, "query.target"),
  );
};
