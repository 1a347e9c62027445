import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AuditLog } from "./audit-log.js";
import type { DatabaseHandle } from "./connect.js";
import { createTestDatabase, testEngines } from "./testing.js";

describe.each(testEngines)("the audit log on %s", (engine) => {
  let handle: DatabaseHandle;
  let drop: () => Promise<void>;
  let log: AuditLog;

  beforeAll(async () => {
    const database = await createTestDatabase(engine);
    drop = database.drop;
    handle = await database.open();
    log = new AuditLog(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
    await drop?.();
  });

  test("the database refuses to change or remove a row, whoever asks", async () => {
    const event = await log.append({
      accountId: "acct-a",
      type: "key.created",
      actor: { kind: "session", id: "ses-1", address: "192.0.2.1" },
      target: { type: "key", id: "key-1", name: "ci" },
    });
    await expect(
      handle.db.updateTable("audit_events").set({ type: "key.deleted" }).where("id", "=", event.id).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(handle.db.deleteFrom("audit_events").where("id", "=", event.id).execute()).rejects.toThrow(
      /append-only/,
    );
    await expect(handle.db.deleteFrom("audit_events").execute()).rejects.toThrow(/append-only/);
    if (engine === "postgres")
      await expect(sql`truncate audit_events`.execute(handle.db)).rejects.toThrow(/append-only/);
    const row = await handle.db
      .selectFrom("audit_events")
      .selectAll()
      .where("id", "=", event.id)
      .executeTakeFirstOrThrow();
    expect(row.type).toBe("key.created");
  });

  test("lists an account's events newest first, by page, with filters", async () => {
    for (const type of ["secret.created", "secret.updated", "sandbox.created", "secret.deleted"])
      await log.append({
        accountId: "acct-b",
        type,
        actor: { kind: "key", id: "key-2" },
        target: { type: "x", id: type },
      });
    await log.append({ accountId: "acct-c", type: "secret.created", actor: { kind: "system" } });

    const first = await log.list("acct-b", { limit: 3 });
    expect(first.items.map((event) => event.type)).toEqual([
      "secret.deleted",
      "sandbox.created",
      "secret.updated",
    ]);
    const second = await log.list("acct-b", { limit: 3, cursor: first.nextCursor ?? "" });
    expect(second.items.map((event) => event.type)).toEqual(["secret.created"]);
    expect(second.nextCursor).toBeNull();

    const secrets = await log.list("acct-b", { limit: 10, type: "secret." });
    expect(secrets.items.map((event) => event.type)).toEqual([
      "secret.deleted",
      "secret.updated",
      "secret.created",
    ]);
    // A type without the trailing dot is exact; `_` is not a wildcard in a prefix.
    expect((await log.list("acct-b", { limit: 10, type: "secret" })).items).toEqual([]);
    expect((await log.list("acct-b", { limit: 10, type: "sandbox_" })).items).toEqual([]);
    expect((await log.list("acct-b", { limit: 10, target: "sandbox.created" })).items).toHaveLength(1);
    expect((await log.list("acct-b", { limit: 10, since: "2999-01-01T00:00:00Z" })).items).toEqual([]);
    expect((await log.list("acct-b", { limit: 10, until: "2000-01-01T00:00:00Z" })).items).toEqual([]);

    const exported = [];
    for await (const event of log.export({ type: "secret.created" })) exported.push(event.accountId);
    expect(exported).toEqual(["acct-b", "acct-c"]);
  });
});
