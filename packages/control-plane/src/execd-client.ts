import { ExecdClient, type SandboxOperations } from "@paddock/runtime";
import type { FastifyReply, FastifyRequest } from "fastify";
import { principalOf } from "./auth-hook.js";

/** The execd of the sandbox a request names (`:id`), for the authenticated caller only. */
export function execdForRequest(
  sandboxes: SandboxOperations,
  request: FastifyRequest & { params: { id: string } },
): Promise<ExecdClient> {
  return ExecdClient.of(sandboxes, request.params.id, principalOf(request).accountId);
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
