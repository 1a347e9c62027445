import { createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { SandboxQuota } from "./sandbox-quota.js";
import { SandboxRepository } from "./sandbox-repository.js";
import { sandboxRecord } from "./testing/records.js";

const gib = 2 ** 30;
const quota: SandboxQuota = { plan: "Free", maxSandboxes: 5, maxDiskBytes: 30 * gib };

// Two handles on one database stand for two replicas: each has its own connections, so the
// writes below really race (on PostgreSQL), as creates arriving at different servers do.
describe.each(testEngines)("sandbox quotas on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const handles: DatabaseHandle[] = [];
  let replicas: SandboxRepository[] = [];

  const owned = async (owner: string) =>
    (await replicas[0]?.findAll({ owner, includePooled: true }))?.length ?? 0;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    for (let i = 0; i < (engine === "postgres" ? 2 : 1); i++) handles.push(await database.open());
    replicas = handles.map((handle) => new SandboxRepository(handle.db));
  });
  afterAll(async () => {
    for (const handle of handles) await handle.close();
    await database?.drop();
  });

  test("12 concurrent inserts for one owner with room for 5: exactly 5 are written, the rest refused", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        replicas[i % replicas.length]?.insert(sandboxRecord(`sbx-race-${i}`, { owner: "acct-race" }), {
          diskBytes: gib,
          quota,
        }),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(5);
    for (const result of results.filter((result) => result.status === "rejected"))
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "quota_exceeded", status: 403 });
    expect(await owned("acct-race")).toBe(5);
    // Another owner's room is its own.
    await replicas[0]?.insert(sandboxRecord("sbx-other", { owner: "acct-other" }), { diskBytes: gib, quota });
    expect(await owned("acct-other")).toBe(1);
  });

  test("the disk quotas of an owner's sandboxes add up to at most the plan's disk", async () => {
    const insert = (id: string, diskBytes: number) =>
      replicas[0]?.insert(sandboxRecord(id, { owner: "acct-disk" }), { diskBytes, quota });
    await insert("sbx-disk-1", 10 * gib);
    await insert("sbx-disk-2", 10 * gib);
    await expect(insert("sbx-disk-3", 11 * gib)).rejects.toMatchObject({
      code: "quota_exceeded",
      message: expect.stringMatching(/^disk limit: .*30\.0 GiB/),
    });
    await insert("sbx-disk-3", 10 * gib);
    expect(await owned("acct-disk")).toBe(3);
  });

  test("warm-pool claims count too: concurrent claims stop at the owner's room", async () => {
    for (let i = 0; i < 8; i++)
      await replicas[0]?.insert(sandboxRecord(`sbx-warm-${i}`, { pooledFor: "python" }), { diskBytes: gib });
    await replicas[0]?.insert(sandboxRecord("sbx-claimer-own", { owner: "acct-claimer" }), {
      diskBytes: gib,
      quota,
    });
    const claims = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        replicas[i % replicas.length]?.claimPooled(
          "python",
          { owner: "acct-claimer", metadata: {}, expiresAt: null },
          quota,
        ),
      ),
    );
    const claimed = claims.filter((claim) => claim.status === "fulfilled" && claim.value);
    expect(claimed).toHaveLength(4);
    for (const claim of claims.filter((claim) => claim.status === "rejected"))
      expect((claim as PromiseRejectedResult).reason).toMatchObject({ code: "quota_exceeded" });
    expect(await owned("acct-claimer")).toBe(5);
    // The sandboxes not claimed stay in the pool.
    expect(await replicas[0]?.countPooled("python")).toBe(4);
  });
});
