/**
 * E2B's stock `e2b` SDK's volumes against a live Paddock server (real Docker, gVisor): team
 * volumes are the account's volumes (decision 0192), mounted with `volumeMounts` on create.
 */
import { Sandbox, Volume, VolumeNotFoundError } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

describe("the stock e2b SDK: volumes", () => {
  let server: E2bServer;

  beforeAll(async () => {
    server = await startE2bServer();
    Object.assign(process.env, server.env);
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("Volume.create, volumeMounts on two sandboxes, files outliving them, destroy", async () => {
    const volume = await Volume.create("e2b-data");
    expect(volume.name).toBe("e2b-data");
    expect((await Volume.list()).map((listed) => listed.volumeId)).toEqual([volume.volumeId]);
    expect(await Volume.getInfo(volume.volumeId)).toMatchObject({
      volumeId: volume.volumeId,
      name: "e2b-data",
    });

    const writer = await Sandbox.create("base", { volumeMounts: { "/mnt/data": volume } });
    const reader = await Sandbox.create("base", { volumeMounts: { "/mnt/shared": "e2b-data" } });
    await writer.commands.run("echo from-e2b > /mnt/data/note.txt");
    expect((await reader.commands.run("cat /mnt/shared/note.txt")).stdout).toBe("from-e2b\n");
    expect((await Sandbox.getInfo(writer.sandboxId)).volumeMounts).toEqual([
      { name: "e2b-data", path: "/mnt/data" },
    ]);
    // The list says the same of each sandbox.
    const listed = await Sandbox.list().nextItems();
    expect(listed.find((info) => info.sandboxId === reader.sandboxId)?.volumeMounts).toEqual([
      { name: "e2b-data", path: "/mnt/shared" },
    ]);

    // In use: refused, and the volume stays.
    await expect(Volume.destroy(volume.volumeId)).rejects.toThrow(/mounted by/);
    await writer.kill();
    await reader.kill();
    const later = await Sandbox.create("base", { volumeMounts: { "/data": volume } });
    expect((await later.commands.run("cat /data/note.txt")).stdout).toBe("from-e2b\n");
    await later.kill();

    expect(await Volume.destroy(volume.volumeId)).toBe(true);
    expect(await Volume.destroy(volume.volumeId)).toBe(false);
    await expect(Volume.getInfo(volume.volumeId)).rejects.toBeInstanceOf(VolumeNotFoundError);
  });

  test("another team's volume is not found, by id and by name; a bad name is refused", async () => {
    const volume = await Volume.create("e2b-private");
    const otherKey = await server.keyFor("e2b-other@example.com");
    await expect(Volume.getInfo(volume.volumeId, { apiKey: otherKey })).rejects.toBeInstanceOf(
      VolumeNotFoundError,
    );
    expect(await Volume.destroy(volume.volumeId, { apiKey: otherKey })).toBe(false);
    expect(await Volume.list({ apiKey: otherKey })).toEqual([]);
    await expect(
      Sandbox.create("base", { apiKey: otherKey, volumeMounts: { "/data": "e2b-private" } }),
    ).rejects.toThrow(/no volume named e2b-private/);
    expect(await Sandbox.list({ apiKey: otherKey }).nextItems()).toEqual([]);

    await expect(Volume.create("not a name")).rejects.toThrow(/letters, digits/);
    await expect(Volume.create("e2b-private")).rejects.toThrow(/exists already/);
    expect(await Volume.destroy(volume.volumeId)).toBe(true);
  });
});
