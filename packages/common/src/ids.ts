import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";

/** Random, unguessable, DNS-label-safe id, e.g. `sbx-4k2j…` (24 base36 chars ≈ 124 bits). */
export function newId(prefix: string, length = 24): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length)) {
      // Rejection sampling keeps every character equally likely.
      if (byte < 252 && out.length < length) out += alphabet[byte % 36];
    }
  }
  return `${prefix}-${out}`;
}

/** Opaque secret token (API keys, access tokens): 32 random bytes, base64url. */
export function newSecret(prefix = ""): string {
  return prefix + randomBytes(32).toString("base64url");
}

/** A secret derived from a server key and a public name; nothing needs storing to recompute it. */
export function deriveSecret(key: string, purpose: string, name: string): string {
  return createHmac("sha256", key).update(`${purpose}\0${name}`).digest("base64url");
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Compare two secrets without leaking their contents through timing. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}
