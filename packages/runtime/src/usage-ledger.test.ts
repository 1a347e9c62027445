import { createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SandboxRepository } from "./sandbox-repository.js";
import type { SandboxState } from "./state-machine.js";
import { sandboxRecord } from "./testing/records.js";
import { periodOf, splitByDay, splitByPeriod, UsageLedger } from "./usage-ledger.js";

// The ledger's bookkeeping on both engines, with explicit times (no sandboxes, no sleeping).

const at = (iso: string) => new Date(iso);

test("periods are calendar months in UTC, and a stretch is cut at their boundaries", () => {
  expect(periodOf(at("2025-01-31T23:59:59.999Z"))).toEqual({
    id: "2025-01",
    start: at("2025-01-01T00:00:00.000Z"),
    end: at("2025-02-01T00:00:00.000Z"),
  });
  expect(periodOf(at("2025-12-15T00:00:00Z")).end).toEqual(at("2026-01-01T00:00:00.000Z"));
  expect(splitByPeriod(at("2025-01-31T23:59:00Z"), at("2025-02-01T00:01:30Z"))).toEqual([
    { period: "2025-01", from: at("2025-01-31T23:59:00Z"), ms: 60_000 },
    { period: "2025-02", from: at("2025-02-01T00:00:00Z"), ms: 90_000 },
  ]);
  expect(splitByPeriod(at("2025-02-01T00:00:00Z"), at("2025-02-01T00:00:00Z"))).toEqual([]);
});

test("a stretch is cut at UTC midnights, each piece named by its day", () => {
  expect(splitByDay(at("2025-02-28T23:00:00Z"), at("2025-03-02T01:30:00Z"))).toEqual([
    { day: "2025-02-28", ms: 3_600_000 },
    { day: "2025-03-01", ms: 86_400_000 },
    { day: "2025-03-02", ms: 5_400_000 },
  ]);
  expect(splitByDay(at("2025-03-01T10:00:00Z"), at("2025-03-01T10:00:05Z"))).toEqual([
    { day: "2025-03-01", ms: 5_000 },
  ]);
  expect(splitByDay(at("2025-03-01T10:00:00Z"), at("2025-03-01T10:00:00Z"))).toEqual([]);
});

describe.each(testEngines)("usage ledger on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: DatabaseHandle;
  let ledger: UsageLedger;
  let sandboxes: SandboxRepository;

  const sandbox = async (id: string, owner: string | null, state: SandboxState, pooledFor?: string) => {
    const record = sandboxRecord(id, {
      owner,
      status: { state, lastTransitionAt: new Date().toISOString() },
      template: "python",
      ...(pooledFor ? { pooledFor } : {}),
    });
    await sandboxes.insert(record);
  };

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    handle = await database.open();
    ledger = new UsageLedger(handle.db);
    sandboxes = new SandboxRepository(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
    await database?.drop();
  });

  test("running time is counted between open and close, across checkpoints, per month", async () => {
    await sandbox("sbx-a", "acct-1", "Running");
    await ledger.openIfRunning("sbx-a", at("2025-03-31T23:58:00Z"));
    await ledger.openIfRunning("sbx-a", at("2025-03-31T23:59:00Z")); // already open: unchanged
    await ledger.checkpoint(at("2025-03-31T23:59:30Z"));
    expect((await ledger.accountUsage("acct-1", at("2025-03-31T23:59:45Z"))).runningMs).toBe(105_000);
    await ledger.close("sbx-a", at("2025-04-01T00:00:20Z"));
    await ledger.close("sbx-a", at("2025-04-01T00:10:00Z")); // already closed: nothing more
    expect(await ledger.accountUsage("acct-1", at("2025-03-31T23:59:59Z"))).toEqual({
      runningMs: 120_000,
      running: 0,
    });
    expect(await ledger.accountUsage("acct-1", at("2025-04-02T00:00:00Z"))).toEqual({
      runningMs: 20_000,
      running: 0,
    });
    const april = await ledger.sandboxUsage("acct-1", { page: 1, pageSize: 10 }, at("2025-04-02T00:00:00Z"));
    expect(april).toEqual({
      totalItems: 1,
      items: [
        {
          sandboxId: "sbx-a",
          template: "python",
          state: "Running",
          runningMs: 20_000,
          running: false,
          startedAt: "2025-04-01T00:00:00.000Z",
        },
      ],
    });
  });

  test("days: each UTC day of the period up to today, checkpointed and live time on its day", async () => {
    await sandbox("sbx-days", "acct-days", "Running");
    // Open across a month's end and two midnights; the first checkpoint splits the stored part.
    await ledger.openIfRunning("sbx-days", at("2025-05-31T23:00:00Z"));
    await ledger.checkpoint(at("2025-06-01T00:30:00Z"));
    await ledger.close("sbx-days", at("2025-06-02T00:15:00Z"));
    await sandbox("sbx-days-2", "acct-days", "Running");
    await ledger.openIfRunning("sbx-days-2", at("2025-06-03T23:59:00Z"));
    const now = at("2025-06-04T00:02:00Z");
    const days = await ledger.accountDays("acct-days", now);
    expect(days).toEqual([
      { day: "2025-06-01", runningMs: 86_400_000 },
      { day: "2025-06-02", runningMs: 900_000 },
      { day: "2025-06-03", runningMs: 60_000 },
      { day: "2025-06-04", runningMs: 120_000 },
    ]);
    const total = days.reduce((sum, day) => sum + day.runningMs, 0);
    expect(total).toBe((await ledger.accountUsage("acct-days", now)).runningMs);
    // May's hour stayed in May; the first of a month lists that one day.
    expect(await ledger.accountDays("acct-days", at("2025-05-31T23:30:00Z"))).toHaveLength(31);
    expect((await ledger.accountDays("acct-days", at("2025-05-31T23:30:00Z")))[30]).toEqual({
      day: "2025-05-31",
      runningMs: 3_600_000,
    });
    expect(await ledger.accountDays("acct-other", at("2025-07-01T00:00:00Z"))).toEqual([
      { day: "2025-07-01", runningMs: 0 },
    ]);
    await ledger.close("sbx-days-2", now);
  });

  test("only Running account sandboxes are metered; open time is counted live", async () => {
    await sandbox("sbx-paused", "acct-2", "Paused");
    await sandbox("sbx-pool", null, "Running", "python");
    await sandbox("sbx-v1", null, "Running");
    await sandbox("sbx-b", "acct-2", "Running");
    for (const id of ["sbx-paused", "sbx-pool", "sbx-v1", "sbx-b"])
      await ledger.openIfRunning(id, at("2025-05-10T10:00:00Z"));
    expect(await ledger.accountsRunning()).toEqual(["acct-2"]);
    expect(await ledger.accountUsage("acct-2", at("2025-05-10T10:00:07.5Z"))).toEqual({
      runningMs: 7_500,
      running: 1,
    });
    const page = await ledger.sandboxUsage("acct-2", { page: 1, pageSize: 10 }, at("2025-05-10T10:00:07.5Z"));
    expect(page.items).toEqual([
      expect.objectContaining({ sandboxId: "sbx-b", runningMs: 7_500, running: true }),
    ]);
    await ledger.close("sbx-b", at("2025-05-10T10:00:10Z"));
  });

  test("sync closes a meter at the time its sandbox left Running and opens missing ones", async () => {
    await sandbox("sbx-c", "acct-3", "Running");
    await ledger.openIfRunning("sbx-c", new Date(Date.now() - 60_000));
    // The state changed but the meter write was lost.
    await sandboxes.setState("sbx-c", "Running", "Pausing");
    await sandboxes.setState("sbx-c", "Pausing", "Paused");
    const left = Date.now();
    await sandbox("sbx-d", "acct-3", "Running");
    await ledger.sync(new Date(left + 30_000));
    const usage = await ledger.accountUsage("acct-3", new Date(left + 30_000));
    // sbx-c: about a minute (up to its transition); sbx-d: from the sync on, nothing yet.
    expect(usage.running).toBe(1);
    expect(usage.runningMs).toBeGreaterThanOrEqual(60_000);
    expect(usage.runningMs).toBeLessThan(62_000);
  });

  test("a read racing checkpoints never misses the time one moves from meter to ledger", async () => {
    await sandbox("sbx-race", "acct-race", "Running");
    const opened = Date.now() - 10_000;
    await ledger.openIfRunning("sbx-race", new Date(opened));
    const checkpoints = (async () => {
      for (let round = 0; round < 60; round++) await ledger.checkpoint();
    })();
    const short: number[] = [];
    for (let round = 0; round < 60; round++) {
      const now = new Date();
      const [usage, days] = await Promise.all([
        ledger.accountUsage("acct-race", now),
        ledger.accountDays("acct-race", now),
      ]);
      const daysTotal = days.reduce((sum, day) => sum + day.runningMs, 0);
      // A checkpoint written after `now` may count a few ms past it; none may go missing.
      for (const total of [usage.runningMs, daysTotal]) {
        if (total < now.getTime() - opened) short.push(now.getTime() - opened - total);
      }
    }
    await checkpoints;
    expect(short).toEqual([]);
    await ledger.close("sbx-race");
  });

  test("a restart drops the stretch since the last checkpoint; pages are bounded", async () => {
    await sandbox("sbx-e", "acct-4", "Running");
    await ledger.openIfRunning("sbx-e", new Date(Date.now() - 3_600_000));
    await ledger.restartMeters(new Date());
    expect((await ledger.accountUsage("acct-4")).runningMs).toBeLessThan(5_000);
    for (const id of ["sbx-f", "sbx-g"]) {
      await sandbox(id, "acct-4", "Running");
      await ledger.openIfRunning(id);
    }
    const first = await ledger.sandboxUsage("acct-4", { page: 1, pageSize: 2 });
    const second = await ledger.sandboxUsage("acct-4", { page: 2, pageSize: 2 });
    expect(first.totalItems).toBe(3);
    expect(first.items).toHaveLength(2);
    expect(second.items).toHaveLength(1);
    expect(new Set([...first.items, ...second.items].map((item) => item.sandboxId))).toEqual(
      new Set(["sbx-e", "sbx-f", "sbx-g"]),
    );
  });
});
