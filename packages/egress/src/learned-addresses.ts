import type { AddressRecord } from "./dns-wire.js";
import { TABLE } from "./nft-ruleset.js";

/** Learned addresses stay at least this long, so clients that cache a little past the TTL still connect. */
const GRACE_SECONDS = 60;
/** nft keeps timeouts in 32-bit milliseconds; a week is far beyond any useful TTL. */
const MAX_SECONDS = 7 * 24 * 3600;

interface Entry {
  family: 4 | 6;
  expiresAt: number;
  names: Set<string>;
}

/**
 * Addresses from allowed names' DNS answers, mirrored in the nft sets dns4/dns6 with a timeout of
 * at least the record's TTL. The map remembers which names brought each address so a policy
 * change can keep exactly the addresses whose names are still allowed.
 */
export class LearnedAddresses {
  private readonly entries = new Map<string, Entry>();
  constructor(
    private readonly apply: (script: string) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds (or extends) addresses in the kernel; resolves once new connections to them pass. */
  async learn(name: string, records: AddressRecord[]): Promise<void> {
    const now = this.now();
    const lines: string[] = [];
    for (const record of records) {
      const seconds = Math.min(Math.max(record.ttl, 0) + GRACE_SECONDS, MAX_SECONDS);
      const expiresAt = now + seconds * 1000;
      const entry = this.entries.get(record.address);
      if (entry && entry.expiresAt > now) {
        entry.names.add(name);
        if (entry.expiresAt >= now + record.ttl * 1000) continue;
      }
      this.entries.set(record.address, {
        family: record.family,
        expiresAt,
        names: new Set([name, ...(entry && entry.expiresAt > now ? entry.names : [])]),
      });
      lines.push(...elementLines(record.family, record.address, seconds));
    }
    if (lines.length > 0) await this.apply(`${lines.join("\n")}\n`);
  }

  /** nft lines that empty the sets and re-add the addresses whose names `allowed` still allows. */
  rebuildLines(allowed: (name: string) => boolean): string[] {
    const now = this.now();
    const lines = [`flush set ${TABLE} dns4`, `flush set ${TABLE} dns6`];
    for (const [address, entry] of this.entries) {
      const names = [...entry.names].filter(allowed);
      const seconds = Math.ceil((entry.expiresAt - now) / 1000);
      if (names.length === 0 || seconds <= 0) {
        this.entries.delete(address);
        continue;
      }
      entry.names = new Set(names);
      lines.push(`add element ${TABLE} dns${entry.family} { ${address} timeout ${seconds}s }`);
    }
    return lines;
  }

  /** Forgets everything (the sets are emptied by the caller's transaction). */
  clear(): void {
    this.entries.clear();
  }
}

/** `add` may be a no-op on an element that exists; delete and re-add it so the new timeout holds. */
function elementLines(family: 4 | 6, address: string, seconds: number): string[] {
  const set = `${TABLE} dns${family}`;
  return [
    `add element ${set} { ${address} }`,
    `delete element ${set} { ${address} }`,
    `add element ${set} { ${address} timeout ${seconds}s }`,
  ];
}
