import { Errors, PaddockError, safeEqual } from "@paddock/common";
import type { FastifyRequest } from "fastify";

/** The two header names the runtime API accepts for its key: ours (SPEC.md) and the upstream one. */
export const apiKeyHeaders = ["runtime-api-key", "open-sandbox-api-key"] as const;

export function presentedApiKey(request: { headers: FastifyRequest["headers"] }): string | undefined {
  for (const name of apiKeyHeaders) {
    const value = request.headers[name];
    if (typeof value === "string" && value) return value;
  }
  return undefined;
}

/** Throws 401 unless the request carries the configured key (compared in constant time). */
export function requireApiKey(
  request: { headers: FastifyRequest["headers"] },
  apiKey: string | undefined,
): void {
  if (!apiKey) return;
  const presented = presentedApiKey(request);
  if (!presented || !safeEqual(presented, apiKey)) {
    throw new PaddockError(
      Errors.unauthorized,
      "send the API key in the RUNTIME-API-KEY (or OPEN-SANDBOX-API-KEY) header",
    );
  }
}
