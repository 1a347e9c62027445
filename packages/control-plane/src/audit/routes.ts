import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AuditLog } from "@paddock/db";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import { AuditPage, AuditQuery } from "./schemas.js";

/** The account's own audit log, newest first (decision 0204). Read-only: no route changes it. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ identity: Identity; log: AuditLog }> = async (
  app,
  { identity, log },
) => {
  app.addHook("onRequest", authenticate(identity, null));

  app.get(
    "/audit",
    {
      schema: {
        tags: ["audit"],
        description:
          "Security-relevant events of the caller's account (sign-ups, logins, keys, secrets, sandboxes, templates, limits hit, payments, plan), newest first.",
        querystring: AuditQuery,
        response: { 200: AuditPage, ...errorResponses },
      },
    },
    async (request) => {
      const { limit = 50, ...query } = request.query;
      return log.list(principalOf(request).accountId, { ...query, limit });
    },
  );
};
