import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { isPaddockError } from "@paddock/common";
import type { AuditTrail } from "../audit/audit-trail.js";
import { authenticate, principalOf, sessionCookie } from "../http/auth-hook.js";
import { deletedResponses, ErrorBody, errorResponses } from "../http/error-schemas.js";
import { ControlPlaneErrors } from "../http/errors.js";
import { Account, Credentials, Session } from "./auth-schemas.js";
import type { Identity } from "./identity.js";

export const authRoutes: FastifyPluginAsyncTypebox<{ identity: Identity; audit: AuditTrail }> = async (
  app,
  { identity, audit },
) => {
  app.post(
    "/auth/signup",
    {
      schema: {
        tags: ["auth"],
        body: Credentials,
        response: { 201: Account, ...errorResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const account = await identity.signup(request.body.email, request.body.password, request.ip);
      await audit.recordUnauthenticated(request, account.id, "account.signed_up", "anonymous");
      return reply.status(201).send(account);
    },
  );

  app.post(
    "/auth/login",
    {
      schema: {
        tags: ["auth"],
        body: Credentials,
        response: { 200: Session, ...errorResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const session = await identity
        .login(request.body.email, request.body.password, request.ip)
        .catch(async (error: unknown) => {
          if (isPaddockError(error) && error.code === ControlPlaneErrors.invalidCredentials.code)
            await audit.loginFailed(request, request.body.email);
          throw error;
        });
      await audit.recordUnauthenticated(request, session.account.id, "auth.login_succeeded", "password");
      reply.header(
        "set-cookie",
        `${sessionCookie}=${session.token}; HttpOnly; SameSite=Strict; Path=/; Expires=${new Date(session.expiresAt).toUTCString()}`,
      );
      return session;
    },
  );

  await app.register(async (authenticated) => {
    authenticated.addHook("onRequest", authenticate(identity, null));
    authenticated.get(
      "/auth/me",
      { schema: { tags: ["auth"], response: { 200: Account, ...errorResponses } } },
      async (request) => identity.account(principalOf(request).accountId),
    );
    authenticated.post(
      "/auth/logout",
      { schema: { tags: ["auth"], response: deletedResponses } },
      async (request, reply) => {
        await identity.logout(principalOf(request));
        await audit.record(request, principalOf(request), "auth.logged_out");
        reply.header("set-cookie", `${sessionCookie}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
        return reply.status(204).send(undefined as never);
      },
    );
  });
};
