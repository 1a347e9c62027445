import type { Database, Db } from "@paddock/db";
import { sql, type Transaction } from "kysely";

type Queries = Db | Transaction<Database>;

/** A usage period: a calendar month in UTC, named `YYYY-MM`. */
export interface Period {
  id: string;
  start: Date;
  end: Date;
}

export function periodOf(at: Date): Period {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { id: start.toISOString().slice(0, 7), start, end };
}

/** The stretch [from, to) cut at month boundaries, so each piece is counted in its own period. */
export function splitByPeriod(from: Date, to: Date): Array<{ period: string; from: Date; ms: number }> {
  const pieces: Array<{ period: string; from: Date; ms: number }> = [];
  let cursor = from;
  while (cursor < to) {
    const period = periodOf(cursor);
    const end = period.end < to ? period.end : to;
    pieces.push({ period: period.id, from: cursor, ms: end.getTime() - cursor.getTime() });
    cursor = end;
  }
  return pieces;
}

/** The stretch [from, to) cut at UTC midnights, each piece named by its day (`YYYY-MM-DD`). */
export function splitByDay(from: Date, to: Date): Array<{ day: string; ms: number }> {
  const pieces: Array<{ day: string; ms: number }> = [];
  let cursor = from;
  while (cursor < to) {
    const next = new Date(Date.UTC(cursor.getUTCFullYear(), cursor.getUTCMonth(), cursor.getUTCDate() + 1));
    const end = next < to ? next : to;
    pieces.push({ day: dayOf(cursor), ms: end.getTime() - cursor.getTime() });
    cursor = end;
  }
  return pieces;
}

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export interface SandboxUsage {
  sandboxId: string;
  template: string | null;
  /** The sandbox's state now; Terminated once it is gone. */
  state: string;
  runningMs: number;
  /** True while the sandbox runs (its time is still growing). */
  running: boolean;
  startedAt: string;
}

/**
 * Persistence of metered running time. An open meter (`usage_meters`) marks a sandbox whose time
 * since `since` is not yet written; closing or checkpointing a meter moves that time into
 * `sandbox_usage`, per calendar month. Every write is a compare-and-set on `since`, so a close
 * racing a checkpoint never counts the same milliseconds twice.
 */
export class UsageLedger {
  constructor(private readonly db: Db) {}

  /**
   * Opens a meter for the sandbox if it is Running and belongs to an account (warm-pool members
   * and runtime-API sandboxes have no account). Does nothing when one is already open.
   */
  async openIfRunning(sandboxId: string, at = new Date()): Promise<void> {
    const since = at.toISOString();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("usage_meters")
        .columns(["sandbox_id", "account_id", "template", "since"])
        .expression((eb) =>
          eb
            .selectFrom("sandboxes")
            .select([
              "id",
              sql<string>`owner`.as("account_id"),
              "template",
              sql<string>`cast(${since} as text)`.as("since"),
            ])
            .where("id", "=", sandboxId)
            .where("state", "=", "Running")
            .where("owner", "is not", null)
            .where("pooled_for", "is", null),
        )
        .onConflict((oc) => oc.column("sandbox_id").doNothing())
        .execute();
      const meter = await trx
        .selectFrom("usage_meters")
        .selectAll()
        .where("sandbox_id", "=", sandboxId)
        .executeTakeFirst();
      // A row from the start, so the sandbox is listed for the period before its first minute.
      if (meter) await addTime(trx, meter, at, at);
    });
  }

  /** Closes the sandbox's meter at `at`, writing the time since its last checkpoint. */
  async close(sandboxId: string, at = new Date()): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const meter = await trx
        .selectFrom("usage_meters")
        .selectAll()
        .where("sandbox_id", "=", sandboxId)
        .executeTakeFirst();
      if (!meter) return;
      const deleted = await trx
        .deleteFrom("usage_meters")
        .where("sandbox_id", "=", sandboxId)
        .where("since", "=", meter.since)
        .executeTakeFirst();
      if (Number(deleted.numDeletedRows) > 0) await addTime(trx, meter, new Date(meter.since), at);
    });
  }

  /** Writes every open meter's time up to `at` and moves the meters forward to it. */
  async checkpoint(at = new Date()): Promise<void> {
    const until = at.toISOString();
    for (const meter of await this.db.selectFrom("usage_meters").selectAll().execute()) {
      if (meter.since >= until) continue;
      await this.db.transaction().execute(async (trx) => {
        const moved = await trx
          .updateTable("usage_meters")
          .set({ since: until })
          .where("sandbox_id", "=", meter.sandbox_id)
          .where("since", "=", meter.since)
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) > 0) await addTime(trx, meter, new Date(meter.since), at);
      });
    }
  }

  /**
   * Brings meters in line with sandbox states, for transitions whose meter write was lost (a
   * crash between the two writes): a meter whose sandbox left Running is closed at the time it
   * left; a Running account sandbox without a meter gets one from `at`.
   */
  async sync(at = new Date()): Promise<void> {
    const stale = await this.db
      .selectFrom("usage_meters as m")
      .leftJoin("sandboxes as s", "s.id", "m.sandbox_id")
      .select(["m.sandbox_id", "m.since", "s.last_transition_at"])
      .where((eb) => eb.or([eb("s.id", "is", null), eb("s.state", "!=", "Running")]))
      .execute();
    for (const meter of stale) {
      const left = meter.last_transition_at ? new Date(meter.last_transition_at) : at;
      const end = left < at ? left : at;
      await this.close(meter.sandbox_id, end > new Date(meter.since) ? end : new Date(meter.since));
    }
    const unmetered = await this.db
      .selectFrom("sandboxes")
      .select("id")
      .where("state", "=", "Running")
      .where("owner", "is not", null)
      .where("pooled_for", "is", null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(selectFrom("usage_meters").select("sandbox_id").whereRef("sandbox_id", "=", "sandboxes.id")),
        ),
      )
      .execute();
    for (const { id } of unmetered) await this.openIfRunning(id, at);
  }

  /**
   * After a restart: what happened between the last checkpoint and now is unknown (the server was
   * not watching), so open meters restart from `at` and that stretch is not counted.
   */
  async restartMeters(at = new Date()): Promise<void> {
    await this.db.updateTable("usage_meters").set({ since: at.toISOString() }).execute();
  }

  /**
   * The account's running time in the period of `at`, including time not yet checkpointed. The
   * stored time and the meters are read in one snapshot: a checkpoint moves time from one to the
   * other, and one committed between two plain reads would be missed.
   */
  async accountUsage(accountId: string, at = new Date()): Promise<{ runningMs: number; running: number }> {
    return this.snapshot((trx) => this.accountUsageIn(trx, accountId, at));
  }

  private async accountUsageIn(trx: Queries, accountId: string, at: Date) {
    const period = periodOf(at);
    const stored = await trx
      .selectFrom("sandbox_usage")
      .select((eb) => eb.fn.sum<string | number | null>("running_ms").as("total"))
      .where("account_id", "=", accountId)
      .where("period", "=", period.id)
      .executeTakeFirst();
    const meters = await trx
      .selectFrom("usage_meters")
      .select("since")
      .where("account_id", "=", accountId)
      .execute();
    const live = meters.reduce((sum, meter) => sum + uncounted(meter.since, period, at), 0);
    return { runningMs: Number(stored?.total ?? 0) + live, running: meters.length };
  }

  /**
   * The account's running time on each UTC day of the period of `at`, from its first day to the
   * day of `at` (days without any time included), with time not yet checkpointed; one snapshot,
   * as in `accountUsage`.
   */
  async accountDays(accountId: string, at = new Date()): Promise<Array<{ day: string; runningMs: number }>> {
    return this.snapshot((trx) => this.accountDaysIn(trx, accountId, at));
  }

  private async accountDaysIn(trx: Queries, accountId: string, at: Date) {
    const period = periodOf(at);
    const days = new Map(splitByDay(period.start, at).map(({ day }) => [day, 0]));
    days.set(dayOf(at), 0); // `at` exactly at midnight: today has no time yet, but is listed
    const stored = await trx
      .selectFrom("account_usage_days")
      .select(["day", "running_ms"])
      .where("account_id", "=", accountId)
      .where("day", ">=", dayOf(period.start))
      .where("day", "<=", dayOf(at))
      .execute();
    for (const row of stored) days.set(row.day, (days.get(row.day) ?? 0) + Number(row.running_ms));
    const meters = await trx
      .selectFrom("usage_meters")
      .select("since")
      .where("account_id", "=", accountId)
      .execute();
    for (const meter of meters) {
      const since = new Date(Math.max(Date.parse(meter.since), period.start.getTime()));
      for (const { day, ms } of splitByDay(since, at)) days.set(day, (days.get(day) ?? 0) + ms);
    }
    return [...days].map(([day, runningMs]) => ({ day, runningMs }));
  }

  /** One page of the account's sandboxes counted in the period of `at`, newest first. */
  async sandboxUsage(
    accountId: string,
    page: { page: number; pageSize: number },
    at = new Date(),
  ): Promise<{ items: SandboxUsage[]; totalItems: number }> {
    const period = periodOf(at);
    const scope = this.db
      .selectFrom("sandbox_usage as u")
      .where("u.account_id", "=", accountId)
      .where("u.period", "=", period.id);
    const count = await scope
      .select((eb) => eb.fn.countAll<string | number>().as("count"))
      .executeTakeFirst();
    const rows = await scope
      .leftJoin("usage_meters as m", "m.sandbox_id", "u.sandbox_id")
      .leftJoin("sandboxes as s", "s.id", "u.sandbox_id")
      .select(["u.sandbox_id", "u.template", "u.running_ms", "u.started_at", "m.since", "s.state"])
      .orderBy("u.started_at", "desc")
      .orderBy("u.sandbox_id", "desc")
      .limit(page.pageSize)
      .offset((page.page - 1) * page.pageSize)
      .execute();
    return {
      totalItems: Number(count?.count ?? 0),
      items: rows.map((row) => ({
        sandboxId: row.sandbox_id,
        template: row.template,
        state: row.state ?? "Terminated",
        runningMs: Number(row.running_ms) + (row.since ? uncounted(row.since, period, at) : 0),
        running: row.since !== null,
        startedAt: row.started_at,
      })),
    };
  }

  /** Reads in one snapshot: PostgreSQL's repeatable read; SQLite's transactions already are one. */
  private snapshot<T>(read: (trx: Queries) => Promise<T>): Promise<T> {
    return this.db
      .transaction()
      .setIsolationLevel("repeatable read")
      .setAccessMode("read only")
      .execute(read);
  }

  /** Accounts with at least one sandbox being metered now. */
  async accountsRunning(): Promise<string[]> {
    const rows = await this.db.selectFrom("usage_meters").select("account_id").distinct().execute();
    return rows.map((row) => row.account_id);
  }
}

/** Time since a meter's last checkpoint that falls inside `period`. */
function uncounted(since: string, period: Period, at: Date): number {
  const from = Math.max(Date.parse(since), period.start.getTime());
  return Math.max(0, Math.min(at.getTime(), period.end.getTime()) - from);
}

async function addTime(
  queries: Queries,
  meter: { sandbox_id: string; account_id: string; template: string | null },
  from: Date,
  to: Date,
): Promise<void> {
  const pieces = to > from ? splitByPeriod(from, to) : [{ period: periodOf(from).id, from, ms: 0 }];
  const now = to.toISOString();
  for (const piece of pieces) {
    await queries
      .insertInto("sandbox_usage")
      .values({
        sandbox_id: meter.sandbox_id,
        period: piece.period,
        account_id: meter.account_id,
        template: meter.template,
        running_ms: piece.ms,
        started_at: piece.from.toISOString(),
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(["sandbox_id", "period"]).doUpdateSet((eb) => ({
          running_ms: eb("sandbox_usage.running_ms", "+", eb.ref("excluded.running_ms")),
          updated_at: eb.ref("excluded.updated_at"),
        })),
      )
      .execute();
  }
  // The same time per UTC day, for the account's daily figures.
  for (const piece of splitByDay(from, to)) {
    await queries
      .insertInto("account_usage_days")
      .values({ account_id: meter.account_id, day: piece.day, running_ms: piece.ms })
      .onConflict((oc) =>
        oc.columns(["account_id", "day"]).doUpdateSet((eb) => ({
          running_ms: eb("account_usage_days.running_ms", "+", eb.ref("excluded.running_ms")),
        })),
      )
      .execute();
  }
}
