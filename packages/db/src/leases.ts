import { performance } from "node:perf_hooks";
import { type Logger, newId, Periodic } from "@paddock/common";
import { sql } from "kysely";
import type { DatabaseHandle } from "./connect.js";

/** Work this replica may do while `held()` answers true. */
export interface Lease {
  readonly name: string;
  held(): boolean;
}

/** For code run outside a server (tests, tools): the work is always this process's. */
export const alwaysHeld = (name: string): Lease => ({ name, held: () => true });

interface LeaseState extends Lease {
  /** Until when (performance.now()) this replica may trust its hold. */
  until: number;
  onAcquired: (() => void) | undefined;
}

const replicaPrefix = "replica:";

/**
 * Leases on work that must happen once across server replicas sharing one PostgreSQL: expiry,
 * reconciliation, pool refills, usage checkpoints, plan enforcement. A lease is a row naming its
 * holder and an expiry by the database's clock. The holder renews it every third of its term; a
 * replica that dies stops renewing, and another takes the lease once the term has run out.
 *
 * A holder trusts its lease for the term less a sixth, counted from when it sent its last
 * successful renewal, so it stops before anyone else can start. The work done under a lease still
 * writes with compare-and-set (states, meters, pool claims): an overlap costs a retry, never a
 * double count.
 *
 * Every replica also holds `replica:<id>` while it lives. Others read those to tell a live
 * replica's unfinished work (a create in flight) from a dead one's, which is theirs to clean up.
 *
 * SQLite is one process's database: there this replica holds every lease, and no other lives.
 */
export class Leases {
  /** This process, as it appears in lease rows and on the sandboxes it moves. */
  readonly replica = newId("rep", 16);
  private readonly states = new Map<string, LeaseState>();
  private readonly exclusive: boolean;
  private readonly renewals: Periodic;

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly termMs: number,
    private readonly logger: Logger,
  ) {
    this.exclusive = handle.engine === "sqlite";
    this.renewals = new Periodic(
      () => this.renew(),
      termMs / 3,
      (error) => this.logger.warn({ err: error }, "renewing leases failed"),
    );
    this.lease(`${replicaPrefix}${this.replica}`);
  }

  /** A lease this replica wants; `onAcquired` runs each time it becomes the holder. */
  lease(name: string, onAcquired?: () => void): Lease {
    const existing = this.states.get(name);
    if (existing) return existing;
    const state: LeaseState = {
      name,
      until: 0,
      onAcquired,
      held: () => this.exclusive || performance.now() < state.until,
    };
    this.states.set(name, state);
    return state;
  }

  /** Takes what it can now, then renews and retries every third of the term. */
  async start(): Promise<void> {
    if (this.exclusive) {
      for (const state of this.states.values()) state.onAcquired?.();
      return;
    }
    await this.renew();
    // Others take a move by an unregistered replica for a dead one's: serve nothing without it.
    if (!this.states.get(`${replicaPrefix}${this.replica}`)?.held())
      throw new Error("this server could not register itself as a replica in the database");
    this.renewals.start();
  }

  /** Stops renewing and gives up every lease at once, so a clean shutdown hands over without waiting. */
  async close(): Promise<void> {
    await this.renewals.stop();
    for (const state of this.states.values()) state.until = 0;
    if (this.exclusive) return;
    await this.handle.db
      .deleteFrom("leases")
      .where("holder", "=", this.replica)
      .execute()
      .catch((error: unknown) => this.logger.warn({ err: error }, "releasing leases failed"));
  }

  /** The replicas alive now (this one included). */
  async liveReplicas(): Promise<Set<string>> {
    if (this.exclusive) return new Set([this.replica]);
    const rows = await sql<{ name: string }>`
      select name from leases
      where name like ${`${replicaPrefix}%`} and expires_at > ${databaseNowMs}`.execute(this.handle.db);
    return new Set(rows.rows.map((row) => row.name.slice(replicaPrefix.length)));
  }

  private async renew(): Promise<void> {
    for (const state of this.states.values()) {
      const sent = performance.now();
      const wasHeld = state.held();
      try {
        const won = await this.tryHold(state.name);
        state.until = won ? sent + this.termMs - this.termMs / 6 : 0;
        if (won && !wasHeld) {
          this.logger.info({ lease: state.name, replica: this.replica }, "lease acquired");
          state.onAcquired?.();
        }
      } catch (error) {
        // The hold lapses on its own if renewals keep failing.
        this.logger.warn({ lease: state.name, err: error }, "lease renewal failed");
      }
    }
  }

  /** Takes or renews the lease when it is free, expired or already ours. */
  private async tryHold(name: string): Promise<boolean> {
    const result = await sql<{ holder: string }>`
      insert into leases (name, holder, expires_at)
      values (${name}, ${this.replica}, ${databaseNowMs} + ${this.termMs}::bigint)
      on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
      where leases.holder = excluded.holder or leases.expires_at < ${databaseNowMs}
      returning holder`.execute(this.handle.db);
    return result.rows.length > 0;
  }
}

/** The database's clock in milliseconds: replicas on different machines agree on it. */
const databaseNowMs = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;
