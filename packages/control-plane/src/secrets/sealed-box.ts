import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Encryption at rest for values the server must read back (stored secrets, provider keys).
 * AES-256-GCM under a key derived (HKDF-SHA256) from the server's secret key, so the master key
 * lives in one place: `[server] secret_key` or the generated `data_dir/secret.key`.
 *
 * Each sealed value is bound to a context (e.g. `secret:<account>:<name>`) as additional
 * authenticated data: a ciphertext copied to another row or account does not open.
 */
export class SealedBox {
  readonly #key: Buffer;

  constructor(serverSecretKey: string) {
    this.#key = Buffer.from(hkdfSync("sha256", serverSecretKey, "", "paddock/sealed-box/v1", 32));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv, cipher.getAuthTag(), body].map((part) => part.toString("base64url")).join(".");
  }

  /** Throws when the value was tampered with, sealed under another key or for another context. */
  open(sealed: string, context: string): string {
    const [version, iv, tag, body] = sealed.split(".");
    if (version !== "v1" || iv === undefined || tag === undefined || body === undefined) {
      throw new Error("not a sealed value");
    }
    const decipher = createDecipheriv("aes-256-gcm", this.#key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const plaintext = Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]);
    return plaintext.toString("utf8");
  }
}
