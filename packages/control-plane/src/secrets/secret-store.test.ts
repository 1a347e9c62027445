import { newSecret } from "@paddock/common";
import { createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SecretStore } from "./secret-store.js";

describe.each(testEngines)("secrets on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: DatabaseHandle;
  let secrets: SecretStore;
  const serverKey = newSecret();

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    handle = await database.open();
    secrets = new SecretStore(handle.db, serverKey);
  });
  afterAll(async () => {
    await handle?.close();
    await database?.drop();
  });

  test("set creates then replaces: createdAt kept, updatedAt moved, the row holds no plaintext", async () => {
    const first = await secrets.set("acct_a", "API_TOKEN", "plain-value-one");
    expect(first.created).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await secrets.set("acct_a", "API_TOKEN", "plain-value-two");
    expect(second.created).toBe(false);
    expect(second.secret.createdAt).toBe(first.secret.createdAt);
    expect(second.secret.updatedAt > first.secret.updatedAt).toBe(true);
    const rows = await handle.db.selectFrom("secrets").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain("plain-value");
    expect(await secrets.resolve("acct_a", { TOKEN: "API_TOKEN" })).toEqual({ TOKEN: "plain-value-two" });
  });

  test("names are per account: listing, resolving and deleting never reach another account's", async () => {
    await secrets.set("acct_b", "SHARED_NAME", "value-of-b");
    await secrets.set("acct_c", "SHARED_NAME", "value-of-c");
    expect((await secrets.list("acct_b")).map((secret) => secret.name)).toEqual(["SHARED_NAME"]);
    expect(await secrets.resolve("acct_c", { X: "SHARED_NAME" })).toEqual({ X: "value-of-c" });
    await expect(secrets.resolve("acct_b", { X: "API_TOKEN" })).rejects.toMatchObject({
      code: "unknown_secret",
      status: 400,
    });
    await expect(secrets.delete("acct_b", "API_TOKEN")).rejects.toMatchObject({ code: "secret_not_found" });
    await secrets.delete("acct_b", "SHARED_NAME");
    expect(await secrets.list("acct_b")).toEqual([]);
    expect(await secrets.resolve("acct_c", { X: "SHARED_NAME" })).toEqual({ X: "value-of-c" });
  });

  test("a sealed value moved to another account's row does not open", async () => {
    await secrets.set("acct_d", "MOVED", "value-of-d");
    await secrets.set("acct_e", "MOVED", "value-of-e");
    const stolen = await handle.db
      .selectFrom("secrets")
      .select("sealed_value")
      .where("account_id", "=", "acct_d")
      .executeTakeFirstOrThrow();
    await handle.db
      .updateTable("secrets")
      .set({ sealed_value: stolen.sealed_value })
      .where("account_id", "=", "acct_e")
      .execute();
    await expect(secrets.resolve("acct_e", { X: "MOVED" })).rejects.toThrow();
  });

  test("a value over 64 KiB is refused and nothing changes", async () => {
    await expect(secrets.set("acct_f", "BIG", "x".repeat(64 * 1024 + 1))).rejects.toMatchObject({
      code: "secret_too_large",
      status: 413,
    });
    expect(await secrets.list("acct_f")).toEqual([]);
    expect((await secrets.set("acct_f", "EXACT", "x".repeat(64 * 1024))).created).toBe(true);
  });
});
