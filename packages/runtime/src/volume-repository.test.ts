import { createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Volume } from "./model.js";
import { SandboxRepository } from "./sandbox-repository.js";
import { sandboxRecord } from "./testing/records.js";
import { VolumeRepository } from "./volume-repository.js";

const volumeRecord = (id: string, owner: string | null, name: string): Volume => ({
  id,
  owner,
  name,
  sizeBytes: 2 ** 30,
  createdAt: new Date().toISOString(),
});

// Two handles on one database stand for two replicas (on PostgreSQL): the writes really race.
describe.each(testEngines)("the volume registry's rows on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const handles: DatabaseHandle[] = [];
  let volumes: VolumeRepository[] = [];
  let sandboxes: SandboxRepository[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    for (let i = 0; i < (engine === "postgres" ? 2 : 1); i++) handles.push(await database.open());
    volumes = handles.map((handle) => new VolumeRepository(handle.db));
    sandboxes = handles.map((handle) => new SandboxRepository(handle.db));
  });
  afterAll(async () => {
    for (const handle of handles) await handle.close();
    await database?.drop();
  });

  test.each([
    ["an account", "acct-race"],
    ["the operator", null],
  ])("12 concurrent creates of one name for %s: exactly one is written", async (_, owner) => {
    const quota = { plan: "Free", maxSandboxes: 5, maxDiskBytes: null, maxVolumes: 50 };
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        volumes[i % volumes.length]?.insert(volumeRecord(`vol-${owner}-${i}`, owner, "race"), quota),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results.filter((result) => result.status === "rejected"))
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "volume_exists", status: 409 });
    expect((await volumes[0]?.findAll(owner))?.map((volume) => volume.name)).toEqual(["race"]);
  });

  test("a delete racing a sandbox's create: never both, so no sandbox mounts a deleted volume", async () => {
    for (let round = 0; round < 10; round++) {
      const volumeId = `vol-contended-${round}`;
      await volumes[0]?.insert(volumeRecord(volumeId, "acct-contended", `contended-${round}`));
      const [created, removed] = await Promise.allSettled([
        sandboxes[0]?.insert(sandboxRecord(`sbx-contended-${round}`, { owner: "acct-contended" }), {
          volumes: [{ volumeId, mountPath: "/data" }],
        }),
        volumes[volumes.length - 1]?.remove(volumeId),
      ]);
      if (created?.status === "fulfilled") {
        expect(removed).toMatchObject({ status: "rejected", reason: { code: "volume_in_use" } });
        const mounts = await volumes[0]?.mountsOf([`sbx-contended-${round}`]);
        expect(mounts?.get(`sbx-contended-${round}`)).toHaveLength(1);
      } else {
        expect(removed).toMatchObject({ status: "fulfilled", value: true });
        expect(created?.reason).toMatchObject({ code: "volume_not_found" });
        expect(await sandboxes[0]?.find(`sbx-contended-${round}`)).toBeUndefined();
      }
    }
  });
});
