import { ExecdClient, type SandboxOperations } from "@paddock/runtime";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { authenticate, principalOf } from "../http/auth-hook.js";
import type { Identity } from "../identity/identity.js";
import type { AccountLimits, MeteredCall } from "../plans/account-limits.js";

/** What the routes onto a sandbox's execd (code, files, terminal) are given. */
export interface ExecdRouteOptions {
  identity: Identity;
  sandboxes: SandboxOperations;
  limits: AccountLimits;
}

/** The execd of the sandbox a request names (`:id`), for the authenticated caller only. */
export function execdForRequest(
  sandboxes: SandboxOperations,
  request: FastifyRequest & { params: { id: string } },
): Promise<ExecdClient> {
  return ExecdClient.of(sandboxes, request.params.id, principalOf(request).accountId);
}

/**
 * Guards a plugin of routes onto a sandbox's execd: the caller's key, then `call`'s rate. Returns
 * how its handlers reach the execd of the sandbox a request names.
 */
export function execdRoutes(
  app: FastifyInstance,
  options: ExecdRouteOptions,
  call: MeteredCall,
): (request: FastifyRequest & { params: { id: string } }) => Promise<ExecdClient> {
  app.addHook("onRequest", authenticate(options.identity, "sandboxes"));
  app.addHook("onRequest", options.limits.hook(call));
  return (request) => execdForRequest(options.sandboxes, request);
}

/**
 * Aborted when the client of a buffered answer (`/run`, `/code`) leaves before it is sent: the
 * signal for execd's event streams, so its stream is closed and what it runs is stopped, not read on.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => controller.abort());
  return controller.signal;
}
