import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, test } from "vitest";
import { openDatabase } from "./connect.js";
import { createTestDatabase, testEngines } from "./testing.js";

describe("the SQLite file", () => {
  const root = mkdtempSync(join(tmpdir(), "paddock-modes-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const mode = (path: string) => statSync(path).mode & 0o777;

  test("is readable by its owner alone, in a directory only its owner can enter", async () => {
    const file = join(root, "data", "paddock.db");
    const handle = await openDatabase(`sqlite:${file}`);
    try {
      await handle.db
        .insertInto("sandbox_events")
        .values({ sandbox_id: "s", at: "t", kind: "k", message: "m" })
        .execute();
      expect(mode(join(root, "data"))).toBe(0o700);
      for (const path of [file, `${file}-wal`, `${file}-shm`]) expect(mode(path), path).toBe(0o600);
    } finally {
      await handle.close();
    }
  });

  test("made world-readable before is tightened when opened", async () => {
    const file = join(root, "old.db");
    writeFileSync(file, "");
    chmodSync(file, 0o644);
    const handle = await openDatabase(file);
    await handle.close();
    expect(mode(file)).toBe(0o600);
  });
});

describe.each(testEngines)("database on %s", (engine) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  test("migrates, round-trips a sandbox row and re-opens idempotently", async () => {
    const target = await createTestDatabase(engine);
    cleanups.push(target.drop);
    const first = await target.open();
    const now = new Date().toISOString();
    await first.db
      .insertInto("sandboxes")
      .values({
        id: "sbx-test",
        owner: null,
        state: "Running",
        reason: null,
        message: null,
        last_transition_at: now,
        image_uri: "paddock/base:bookworm",
        snapshot_id: null,
        template: null,
        entrypoint: JSON.stringify(["sleep", "infinity"]),
        metadata: JSON.stringify({ name: "a" }),
        extensions: "{}",
        resource_limits: "{}",
        platform: null,
        network_policy: null,
        secure_access: 0,
        container_id: "c1",
        created_at: now,
        updated_at: now,
        expires_at: null,
      })
      .execute();
    await first.db
      .insertInto("sandbox_events")
      .values({ sandbox_id: "sbx-test", at: now, kind: "x", message: "m" })
      .execute();
    await first.close();

    const second = await target.open();
    const row = await second.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("id", "=", "sbx-test")
      .executeTakeFirst();
    expect(row?.state).toBe("Running");
    expect(JSON.parse(row?.metadata ?? "{}")).toEqual({ name: "a" });
    const events = await second.db.selectFrom("sandbox_events").selectAll().execute();
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toBeTypeOf("number");
    await second.close();
  });
});

test("connections PostgreSQL ends on its own are replaced, and end nothing else", async () => {
  const database = await createTestDatabase("postgres");
  const handle = await database.open();
  const other = await database.open();
  try {
    await handle.db.selectFrom("sandbox_events").select("id").execute(); // an idle client in the pool
    // As a restart or an administrator would: every connection of the server's handle ends.
    const ended = await sql<{ count: number }>`
      select count(pg_terminate_backend(pid))::int as count from pg_stat_activity
      where datname = current_database() and pid != pg_backend_pid()`.execute(other.db);
    expect(ended.rows[0]?.count).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await handle.db.selectFrom("sandbox_events").select("id").execute()).toEqual([]);
  } finally {
    await handle.close();
    await other.close();
    await database.drop();
  }
});
