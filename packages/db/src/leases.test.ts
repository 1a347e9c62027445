import { setTimeout as sleep } from "node:timers/promises";
import { createLogger } from "@paddock/common";
import { sql } from "kysely";
import { afterEach, describe, expect, test } from "vitest";
import type { DatabaseHandle } from "./connect.js";
import { Leases } from "./leases.js";
import { createTestDatabase } from "./testing.js";

const logger = createLogger({ level: "silent" });
const termMs = 600;

/** Polls until `check` holds, failing after `withinMs`. */
async function eventually(check: () => boolean | Promise<boolean>, withinMs: number): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await sleep(20);
  }
  return Date.now() - start;
}

describe("leases on PostgreSQL", () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  });

  async function replicas(count: number) {
    const database = await createTestDatabase("postgres");
    cleanup.push(database.drop);
    const handles: DatabaseHandle[] = [];
    for (let i = 0; i < count; i++) {
      const handle = await database.open();
      cleanup.push(() => handle.close());
      handles.push(handle);
    }
    return handles;
  }

  test("one replica holds a lease; it passes on at once when its holder closes", async () => {
    const [one, two] = await replicas(2);
    const first = new Leases(one as DatabaseHandle, termMs, logger);
    const second = new Leases(two as DatabaseHandle, termMs, logger);
    let takenOver = 0;
    const a = first.lease("expiry");
    const b = second.lease("expiry", () => takenOver++);
    await first.start();
    await second.start();
    cleanup.push(() => second.close());
    expect(a.held()).toBe(true);
    expect(b.held()).toBe(false);
    expect(await second.liveReplicas()).toEqual(new Set([first.replica, second.replica]));

    await first.close();
    expect(a.held()).toBe(false);
    // Released, not expired: the next renewal round (a third of the term) takes it.
    await eventually(() => b.held(), termMs / 3 + 200);
    expect(takenOver).toBe(1);
    expect(await second.liveReplicas()).toEqual(new Set([second.replica]));
  });

  test("a holder that dies keeps its lease only for the term, and stops trusting it first", async () => {
    const [one, two] = await replicas(2);
    const first = new Leases(one as DatabaseHandle, termMs, logger);
    const second = new Leases(two as DatabaseHandle, termMs, logger);
    const a = first.lease("pool-refills");
    const b = second.lease("pool-refills");
    await first.start();
    await second.start();
    cleanup.push(
      () => first.close(),
      () => second.close(),
    );
    expect(a.held()).toBe(true);

    // Its database connections die with it: no renewal, no release.
    await (one as DatabaseHandle).close();
    const diedAt = Date.now();
    await eventually(() => !a.held(), termMs);
    const lapsedAfter = Date.now() - diedAt;
    await eventually(() => b.held(), 2 * termMs);
    const takenAfter = Date.now() - diedAt;
    expect(takenAfter).toBeGreaterThan(lapsedAfter);
    expect(takenAfter).toBeLessThan(termMs + termMs / 3 + 400);
    expect(await second.liveReplicas()).toEqual(new Set([second.replica]));
  });

  test("the database's clock decides, not the replicas'", async () => {
    const [one] = await replicas(1);
    const leases = new Leases(one as DatabaseHandle, 60_000, logger);
    leases.lease("reconciliation");
    await leases.start();
    cleanup.push(() => leases.close());
    const row = await sql<{ left: string }>`
      select expires_at - (extract(epoch from clock_timestamp()) * 1000)::bigint as left
      from leases where name = 'reconciliation'`.execute((one as DatabaseHandle).db);
    const left = Number(row.rows[0]?.left);
    expect(left).toBeGreaterThan(59_000);
    expect(left).toBeLessThanOrEqual(60_000);
  });
});

describe("leases on SQLite", () => {
  test("the one process holds every lease, and no other replica lives", async () => {
    const database = await createTestDatabase("sqlite");
    const handle = await database.open();
    try {
      const leases = new Leases(handle, termMs, logger);
      let acquired = 0;
      const lease = leases.lease("expiry", () => acquired++);
      await leases.start();
      expect(lease.held()).toBe(true);
      expect(acquired).toBe(1);
      expect(await leases.liveReplicas()).toEqual(new Set([leases.replica]));
      await leases.close();
    } finally {
      await handle.close();
      await database.drop();
    }
  });
});
