import { createHmac } from "node:crypto";
import type { Db } from "@paddock/db";
import { sql } from "kysely";

/** `limit` hits per window of `windowSeconds`; a limit of 0 is no limit. */
export interface RateRule {
  limit: number;
  windowSeconds: number;
}

/** One hit to count: what is counted (an account, a key, an address) and under which rule. */
export interface RateHit {
  key: string;
  rule: RateRule;
}

const endOfWindow = (rule: RateRule, now: number) => {
  const ms = rule.windowSeconds * 1000;
  return (Math.floor(now / ms) + 1) * ms;
};

/**
 * Fixed-window counters in the database, so every replica counts against one budget: one row per
 * key, holding when its window ends and the hits in it. A request's hits are one upsert (all its
 * keys in one statement) that starts a new window once the stored one has ended. Keys are stored
 * as keyed hashes, so the table names no email or address.
 */
export class RateCounters {
  constructor(
    private readonly db: Db,
    private readonly secret: string,
  ) {}

  /**
   * Counts one hit on each key. Answers 0 when every key is within its limit, else the seconds
   * until the last of the keys over their limit starts a new window.
   */
  async hit(hits: RateHit[], now = Date.now()): Promise<number> {
    const rows = this.rowsOf(hits, now);
    if (rows.length === 0) return 0;
    const counted = await this.db
      .insertInto("rate_windows")
      .values(rows.map(({ key, windowEnd }) => ({ key, window_end: windowEnd, hits: 1 })))
      .onConflict((conflict) =>
        conflict.column("key").doUpdateSet({
          // A window that has ended starts over; a replica whose clock lags counts in the newer one.
          hits: sql`case when excluded.window_end > rate_windows.window_end then 1 else rate_windows.hits + 1 end`,
          window_end: sql`case when excluded.window_end > rate_windows.window_end then excluded.window_end else rate_windows.window_end end`,
        }),
      )
      .returning(["key", "window_end", "hits"])
      .execute();
    let wait = 0;
    for (const row of counted) {
      const limit = rows.find((candidate) => candidate.key === row.key)?.limit ?? 0;
      if (row.hits > limit) wait = Math.max(wait, Math.ceil((Number(row.window_end) - now) / 1000), 1);
    }
    return wait;
  }

  /** Takes back one hit on each key in its current window (an attempt that turned out legitimate). */
  async refund(hits: RateHit[], now = Date.now()): Promise<void> {
    const rows = this.rowsOf(hits, now);
    if (rows.length === 0) return;
    await this.db
      .updateTable("rate_windows")
      .set({ hits: sql`hits - 1` })
      .where("hits", ">", 0)
      .where((eb) =>
        eb.or(
          rows.map(({ key, windowEnd }) => eb.and([eb("key", "=", key), eb("window_end", "=", windowEnd)])),
        ),
      )
      .execute();
  }

  /** Forgets windows that have ended (their counts no longer matter). */
  async prune(now = Date.now()): Promise<void> {
    await this.db.deleteFrom("rate_windows").where("window_end", "<=", now).execute();
  }

  /**
   * The rows to write, one per distinct key with a limit, in the order of their stored keys: two
   * statements locking the same rows lock them in the same order (no deadlock on PostgreSQL).
   */
  private rowsOf(hits: RateHit[], now: number) {
    const rows = new Map<string, { key: string; windowEnd: number; limit: number }>();
    for (const { key, rule } of hits) {
      if (rule.limit <= 0) continue;
      const stored = createHmac("sha256", this.secret).update(key).digest("base64url");
      rows.set(stored, { key: stored, windowEnd: endOfWindow(rule, now), limit: rule.limit });
    }
    return [...rows.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}
