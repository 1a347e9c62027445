import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";

/** What a caller's request id may look like to be sent back: visible ASCII, bounded. */
const acceptableRequestId = /^[\x21-\x7e]{1,128}$/;

/**
 * Every `/v1` answer, errors included, carries `X-Request-ID` as OpenSandbox's server sends it:
 * the caller's own id when it sent a sane one (SDKs show it in their exceptions), else a new one.
 */
export function echoRequestId(request: FastifyRequest, reply: FastifyReply): void {
  const sent = request.headers["x-request-id"];
  reply.header(
    "x-request-id",
    typeof sent === "string" && acceptableRequestId.test(sent) ? sent : randomUUID(),
  );
}
