import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { authenticate, principalOf, sessionCookie } from "../http/auth-hook.js";
import { deletedResponses, ErrorBody, errorResponses } from "../http/error-schemas.js";
import { Account, Credentials, Session } from "./auth-schemas.js";
import type { Identity } from "./identity.js";

export const authRoutes: FastifyPluginAsyncTypebox<{ identity: Identity }> = async (app, { identity }) => {
  app.post(
    "/auth/signup",
    {
      schema: {
        tags: ["auth"],
        body: Credentials,
        response: { 201: Account, ...errorResponses, 429: ErrorBody },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await identity.signup(request.body.email, request.body.password, request.ip)),
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
      const session = await identity.login(request.body.email, request.body.password, request.ip);
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
        reply.header("set-cookie", `${sessionCookie}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
        return reply.status(204).send(undefined as never);
      },
    );
  });
};
