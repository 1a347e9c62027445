import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { AuditTrail } from "../audit/audit-trail.js";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { deletedResponses, errorResponses } from "../http/error-schemas.js";
import type { Identity } from "./identity.js";
import { ApiKey, ApiKeyWithSecret, CreateKeyRequest, KeyParams } from "./key-schemas.js";

/** API keys: managed with a session or an unscoped key, never with a scoped one. */
export const keyRoutes: FastifyPluginAsyncTypebox<{ identity: Identity; audit: AuditTrail }> = async (
  app,
  { identity, audit },
) => {
  app.addHook("onRequest", authenticate(identity, null));

  app.post(
    "/keys",
    {
      schema: {
        tags: ["keys"],
        body: CreateKeyRequest,
        response: { 201: ApiKeyWithSecret, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { name, scope, expiresAt, format } = request.body;
      const created = await identity.createKey(principalOf(request).accountId, {
        ...(name ? { name } : {}),
        ...(scope ? { scope } : {}),
        ...(expiresAt ? { expiresAt } : {}),
        ...(format ? { format } : {}),
      });
      const { key } = created;
      await audit.record(
        request,
        principalOf(request),
        "key.created",
        { type: "key", id: key.id, name: key.name },
        { scope: key.scope, expiresAt: key.expiresAt },
      );
      return reply.status(201).send(created);
    },
  );

  app.get(
    "/keys",
    {
      schema: {
        tags: ["keys"],
        response: { 200: Type.Object({ items: Type.Array(ApiKey) }), ...errorResponses },
      },
    },
    async (request) => ({ items: await identity.listKeys(principalOf(request).accountId) }),
  );

  app.delete(
    "/keys/:id",
    { schema: { tags: ["keys"], params: KeyParams, response: deletedResponses } },
    async (request, reply) => {
      const principal = principalOf(request);
      const name = (await identity.listKeys(principal.accountId)).find(
        (key) => key.id === request.params.id,
      )?.name;
      await identity.deleteKey(principal.accountId, request.params.id);
      await audit.record(request, principal, "key.deleted", { type: "key", id: request.params.id, name });
      return reply.status(204).send(undefined as never);
    },
  );

  app.post(
    "/keys/:id/rotate",
    { schema: { tags: ["keys"], params: KeyParams, response: { 200: ApiKeyWithSecret, ...errorResponses } } },
    async (request) => {
      const rotated = await identity.rotateKey(principalOf(request).accountId, request.params.id);
      const { key } = rotated;
      await audit.record(request, principalOf(request), "key.rotated", {
        type: "key",
        id: key.id,
        name: key.name,
      });
      return rotated;
    },
  );
};
