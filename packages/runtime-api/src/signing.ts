import { createHmac } from "node:crypto";
import { safeEqual } from "@paddock/common";

/** HMAC over the parts of a URL or token, so a link can grant access without the API key. */
export function sign(secretKey: string, ...parts: Array<string | number>): string {
  return createHmac("sha256", secretKey).update(parts.join("\n")).digest("base64url");
}

export function verify(secretKey: string, signature: string, ...parts: Array<string | number>): boolean {
  return safeEqual(signature, sign(secretKey, ...parts));
}
