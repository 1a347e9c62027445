import { sign, verify } from "./signing.js";

/** Header carrying a proxy access token (secureAccess sandboxes, `expires` endpoints). */
export const accessTokenHeader = "X-Paddock-Access-Token";

/**
 * A token that lets its holder reach one sandbox's ports through the proxy without the API key:
 * `<signature>` (lasting, for secureAccess) or `<expires>.<signature>` (until a Unix time).
 */
export function issueAccessToken(secretKey: string, sandboxId: string, expiresSeconds?: number): string {
  if (expiresSeconds === undefined) return sign(secretKey, "endpoint-access", sandboxId);
  return `${expiresSeconds}.${sign(secretKey, "endpoint-access", sandboxId, expiresSeconds)}`;
}

export function acceptAccessToken(secretKey: string, sandboxId: string, token: string): boolean {
  const dot = token.indexOf(".");
  if (dot < 0) return verify(secretKey, token, "endpoint-access", sandboxId);
  const expires = Number(token.slice(0, dot));
  if (!Number.isSafeInteger(expires) || expires * 1000 < Date.now()) return false;
  return verify(secretKey, token.slice(dot + 1), "endpoint-access", sandboxId, expires);
}
