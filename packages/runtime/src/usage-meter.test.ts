import { createLogger } from "@paddock/common";
import { alwaysHeld, createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SandboxRepository } from "./sandbox-repository.js";
import { sandboxRecord } from "./testing/records.js";
import { UsageLedger } from "./usage-ledger.js";
import { UsageMeter } from "./usage-meter.js";

// The meter wired to the repository as the stack wires it: every state write opens or closes a
// meter. Real databases, no sandboxes.

describe.each(testEngines)("usage meter on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: DatabaseHandle;
  let ledger: UsageLedger;
  let sandboxes: SandboxRepository;
  const logger = createLogger({ level: "silent" });

  const record = (id: string, pooledFor?: string) =>
    sandboxRecord(id, { template: "python", ...(pooledFor ? { pooledFor } : {}) });
  const meters = () => handle.db.selectFrom("usage_meters").select(["sandbox_id", "account_id"]).execute();

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    handle = await database.open();
    ledger = new UsageLedger(handle.db);
    sandboxes = new SandboxRepository(
      handle.db,
      new UsageMeter(ledger, logger, 1000, alwaysHeld("usage")).stateChanged,
    );
  });
  afterAll(async () => {
    await handle?.close();
    await database?.drop();
  });

  test("a warm sandbox is metered from its claim; pausing, failing and removal stop the meter", async () => {
    await sandboxes.insert(record("sbx-warm", "python"));
    expect(await meters()).toEqual([]);
    expect(await sandboxes.claimPooled("python", { owner: "acct-1", metadata: {}, expiresAt: null })).toBe(
      "sbx-warm",
    );
    expect(await meters()).toEqual([{ sandbox_id: "sbx-warm", account_id: "acct-1" }]);

    await sandboxes.setState("sbx-warm", "Running", "Pausing");
    expect(await meters()).toEqual([]);
    await sandboxes.setState("sbx-warm", "Pausing", "Paused");
    await sandboxes.setState("sbx-warm", "Paused", "Resuming");
    expect(await meters()).toEqual([]);
    await sandboxes.setState("sbx-warm", "Resuming", "Running");
    expect(await meters()).toHaveLength(1);
    await sandboxes.setState("sbx-warm", "Running", "Failed");
    expect(await meters()).toEqual([]);
    await sandboxes.setState("sbx-warm", "Failed", "Stopping");
    await sandboxes.remove("sbx-warm");
    const { items } = await ledger.sandboxUsage("acct-1", { page: 1, pageSize: 10 });
    expect(items).toEqual([
      expect.objectContaining({ sandboxId: "sbx-warm", state: "Terminated", running: false }),
    ]);
  });

  test("a sandbox without an account (runtime API) is never metered", async () => {
    await sandboxes.insert(record("sbx-v1"));
    await sandboxes.setState("sbx-v1", "Running", "Pausing");
    await sandboxes.setState("sbx-v1", "Pausing", "Running");
    expect(await meters()).toEqual([]);
  });

  test("a failing meter write never fails the state change", async () => {
    const broken = new UsageMeter(
      { openIfRunning: () => Promise.reject(new Error("disk full")) } as unknown as UsageLedger,
      logger,
      1000,
      alwaysHeld("usage"),
    );
    const repository = new SandboxRepository(handle.db, broken.stateChanged);
    const sandbox = { ...record("sbx-broken"), owner: "acct-2" };
    await expect(repository.insert(sandbox)).resolves.toBeUndefined();
    expect((await repository.find("sbx-broken"))?.status.state).toBe("Running");
  });
});
