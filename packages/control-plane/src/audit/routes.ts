import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Errors, invalidField, PaddockError } from "@paddock/common";
import type { AuditLog } from "@paddock/db";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import { AuditPage, AuditQuery } from "./schemas.js";

/**
 * A time the schema let through as RFC 3339 that JavaScript cannot read (a leap second,
 * 30 February) is refused like any other malformed time, never compared as text.
 */
function instant(field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField(`querystring.${field}`, "is not a valid time"),
    );
  return new Date(ms).toISOString();
}

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
      const { limit = 50, since, until, ...query } = request.query;
      return log.list(principalOf(request).accountId, {
        ...query,
        since: instant("since", since),
        until: instant("until", until),
        limit,
      });
    },
  );
};
