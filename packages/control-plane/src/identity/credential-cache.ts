import type { Principal } from "./identity.js";

interface Entry {
  principal: Principal;
  /** When the credential itself expires (ms since the epoch), if it does. */
  expiresAt: number | null;
  /** When this entry must be looked up again. */
  freshUntil: number;
}

/**
 * Credentials this process authenticated a moment ago, by the SHA-256 of the secret, so a burst
 * of calls costs one database lookup. Entries live `ttlMs` at most, never past the credential's
 * own expiry, and Identity forgets them the moment it revokes the credential (logout, key
 * deletion or rotation), so a revoked credential is never served from here. Another replica's
 * revocation arrives as a broadcast and is forgotten as soon as it does; should the broadcast be
 * lost, the entry still lives `ttlMs` at most.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = 5000,
    private readonly maxEntries = 10_000,
  ) {}

  get(hash: string, now: number): Principal | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.freshUntil <= now || (entry.expiresAt !== null && entry.expiresAt <= now)) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.principal;
  }

  set(hash: string, principal: Principal, expiresAt: string | null, now: number): void {
    if (this.entries.size >= this.maxEntries) {
      // Oldest first (insertion order): the ones most likely stale anyway.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(hash, {
      principal: Object.freeze({ ...principal }),
      expiresAt: expiresAt === null ? null : Date.parse(expiresAt),
      freshUntil: now + this.ttlMs,
    });
  }

  clear(): void {
    this.entries.clear();
  }

  /** Forgets every entry for a credential: a session's token hash or an API key's id. */
  forget(credential: string): void {
    for (const [hash, entry] of this.entries) {
      if (entry.principal.credential === credential) this.entries.delete(hash);
    }
  }
}
