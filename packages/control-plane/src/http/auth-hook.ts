import { Errors, PaddockError } from "@paddock/common";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Identity, Principal, Scope } from "../identity/identity.js";
import { ControlPlaneErrors } from "./errors.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export const sessionCookie = "paddock_session";

/** Bearer token from the Authorization header, or the dashboard's session cookie. */
export function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match)
      throw new PaddockError(Errors.unauthorized, "the Authorization header must be `Bearer <token>`");
    return match[1];
  }
  const cookie = request.headers.cookie?.split(/;\s*/).find((part) => part.startsWith(`${sessionCookie}=`));
  return cookie?.slice(sessionCookie.length + 1);
}

/**
 * An onRequest hook for a scope of routes: authenticates the caller and, when `surface` is given,
 * refuses keys scoped to another surface. `surface: null` means "account management": only
 * sessions and unscoped keys.
 */
export function authenticate(identity: Identity, surface: Scope | null) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = await authorize(identity, bearerOf(request), surface);
    request.principal = principal;
    // A response still streaming when its credential is revoked (events, a WebSocket) ends then;
    // one still being answered (the logout itself) is let finish.
    const release = identity.holdOpen(principal.credential, () => {
      if (reply.sent && !reply.raw.writableFinished) request.raw.socket?.destroy();
    });
    reply.raw.once("close", release);
  };
}

/** The principal of a credential, refused when its key is scoped to another surface. */
export async function authorize(
  identity: Identity,
  credential: string | undefined,
  surface: Scope | null,
): Promise<Principal> {
  const principal = await identity.authenticate(credential);
  if (principal.scope && principal.scope !== surface) {
    throw new PaddockError(
      ControlPlaneErrors.scopeForbidden,
      `this key is limited to ${principal.scope}; use a key without a scope (or a session) here`,
    );
  }
  return principal;
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new PaddockError(Errors.unauthorized, "not authenticated");
  return request.principal;
}
