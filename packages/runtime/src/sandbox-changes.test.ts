import { setTimeout as sleep } from "node:timers/promises";
import { createLogger } from "@paddock/common";
import { Broadcasts, createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SandboxChange, SandboxChanges } from "./sandbox-changes.js";
import { SandboxRepository } from "./sandbox-repository.js";
import { sandboxRecord } from "./testing/records.js";

const logger = createLogger({ level: "silent" });

async function eventually(check: () => boolean, withinMs = 3000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await sleep(20);
  }
}

/** One replica: its own connection, broadcasts, changes and repository over the shared database. */
async function replica(database: { open: () => Promise<DatabaseHandle> }) {
  const handle = await database.open();
  const broadcasts = new Broadcasts(handle, logger);
  const changes = new SandboxChanges(broadcasts, logger);
  const repository = new SandboxRepository(handle.db, async () => undefined, null, changes.publish);
  await broadcasts.start();
  return {
    handle,
    changes,
    repository,
    async close() {
      await broadcasts.close();
      await handle.close();
    },
  };
}

describe.each(testEngines)("sandbox changes on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let one: Awaited<ReturnType<typeof replica>>;
  let two: Awaited<ReturnType<typeof replica>>;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    one = await replica(database);
    // On SQLite there is one process: the "second replica" is a second watcher of the first.
    two = engine === "postgres" ? await replica(database) : one;
  });
  afterAll(async () => {
    await one?.close();
    if (two !== one) await two?.close();
    await database?.drop();
  });

  test("every write to an account's sandbox reaches its owner's watchers, on any replica, and no one else's", async () => {
    const heard: SandboxChange[] = [];
    const others: SandboxChange[] = [];
    const stop = two.changes.watch("acct-a", (change) => heard.push(change));
    const stopOthers = two.changes.watch("acct-b", (change) => others.push(change));
    const { repository } = one;
    await repository.insert(
      sandboxRecord("sbx-1", { owner: "acct-a", status: { state: "Pending", lastTransitionAt: "" } }),
    );
    await repository.setState("sbx-1", "Pending", "Running");
    await repository.setMetadata("sbx-1", { stage: "two" });
    await repository.setExpiresAt("sbx-1", new Date(Date.now() + 60_000).toISOString());
    // A warm-pool member is nobody's until it is claimed; the claim is news to its new owner.
    await repository.insert(
      sandboxRecord("sbx-pool", { owner: null, template: "python", pooledFor: "python" }),
    );
    await repository.setMetadata("sbx-pool", { warm: "yes" });
    await repository.claimPooled("python", { owner: "acct-a", metadata: {}, expiresAt: null });
    await repository.remove("sbx-1");
    await repository.setState("sbx-1", "Running", "Pausing"); // gone: no write, no news
    const expected: SandboxChange[] = [
      { type: "changed", id: "sbx-1" },
      { type: "changed", id: "sbx-1" },
      { type: "changed", id: "sbx-1" },
      { type: "changed", id: "sbx-1" },
      { type: "changed", id: "sbx-pool" },
      { type: "removed", id: "sbx-1" },
    ];
    await eventually(() => heard.length >= expected.length);
    await sleep(100);
    expect(heard).toEqual(expected);
    expect(others).toEqual([]);

    // Once it stops watching, nothing more arrives.
    stop();
    await repository.remove("sbx-pool");
    await sleep(200);
    expect(heard).toHaveLength(expected.length);
    stopOthers();
  });

  // Only PostgreSQL has a listening connection to lose; SQLite delivers within the process.
  if (engine === "postgres")
    test("a broken listening connection is a gap: watchers are told to reload", async () => {
      const heard: SandboxChange[] = [];
      const stop = two.changes.watch("acct-c", (change) => heard.push(change));
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where query = 'listen paddock_sandbox_changes' and datname = current_database()
        and pid != pg_backend_pid()`.execute(one.handle.db);
      // Told when the connection drops and again when it is back (what came between is lost).
      await eventually(() => heard.filter((change) => change.type === "gap").length >= 2);
      await one.repository.insert(sandboxRecord("sbx-2", { owner: "acct-c" }));
      await eventually(() => heard.some((change) => change.type === "changed" && change.id === "sbx-2"));
      stop();
    });
});
