import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AuditTrail } from "../audit/audit-trail.js";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { deletedResponses, ErrorBody, errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import { Secret, SecretList, SecretParams, SetSecretRequest } from "./schemas.js";
import type { SecretStore } from "./secret-store.js";

/** Secrets: names and timestamps go out, values only come in. */
export const secretRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  secrets: SecretStore;
  audit: AuditTrail;
}> = async (app, { identity, secrets, audit }) => {
  app.addHook("onRequest", authenticate(identity, "secrets"));

  app.post(
    "/secrets",
    {
      schema: {
        tags: ["secrets"],
        description:
          "Creates the secret, or replaces the value of an existing one (201 created, 200 replaced).",
        body: SetSecretRequest,
        response: { 200: Secret, 201: Secret, ...errorResponses, 413: ErrorBody },
      },
    },
    async (request, reply) => {
      const { name, value } = request.body;
      const { secret, created } = await secrets.set(principalOf(request).accountId, name, value);
      // The name only: a secret's value never reaches the audit log.
      await audit.record(request, principalOf(request), created ? "secret.created" : "secret.updated", {
        type: "secret",
        name,
      });
      return reply.status(created ? 201 : 200).send(secret);
    },
  );

  app.get(
    "/secrets",
    { schema: { tags: ["secrets"], response: { 200: SecretList, ...errorResponses } } },
    async (request) => ({ items: await secrets.list(principalOf(request).accountId) }),
  );

  app.delete(
    "/secrets/:name",
    { schema: { tags: ["secrets"], params: SecretParams, response: deletedResponses } },
    async (request, reply) => {
      await secrets.delete(principalOf(request).accountId, request.params.name);
      await audit.record(request, principalOf(request), "secret.deleted", {
        type: "secret",
        name: request.params.name,
      });
      return reply.status(204).send(undefined as never);
    },
  );
};
