import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine } from "./user-cli.js";

describe("paddock volumes and sandbox create --volume", () => {
  let t: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("volumes");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("create, list, mount read-write and read-only, refused while mounted, delete", async () => {
    const volume = await user.json<{ id: string; name: string; sizeBytes: number }>([
      "volumes",
      "create",
      "cli-data",
      "--size",
      "32Mi",
    ]);
    expect(volume).toMatchObject({ name: "cli-data", sizeBytes: 32 * 2 ** 20 });
    const table = await user.run(["volumes", "list"]);
    expect(table.stdout).toMatch(/^ID +NAME +SIZE +CREATED\n/);
    expect(table.stdout).toMatch(new RegExp(`^${volume.id} +cli-data +32\\.0 MiB `, "m"));

    const writer = await user.json<{ id: string }>(["sandbox", "create", "--volume", "cli-data:/data"]);
    expect((await user.run(["exec", writer.id, "--", "sh", "-c", "echo kept > /data/kept.txt"])).status).toBe(
      0,
    );
    const inUse = await user.run(["volumes", "delete", volume.id]);
    expect(inUse.status).toBe(1);
    expect(inUse.stderr).toMatch(errorLine("volume_in_use"));

    const reader = await user.json<{ id: string }>(["sandbox", "create", "--volume", "cli-data:/ref:ro"]);
    expect((await user.run(["exec", reader.id, "--", "cat", "/ref/kept.txt"])).stdout).toBe("kept\n");
    expect((await user.run(["exec", reader.id, "--", "touch", "/ref/x"])).status).not.toBe(0);

    const bad = await user.run(["sandbox", "create", "--volume", "cli-data"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("NAME:/PATH");

    for (const id of [writer.id, reader.id]) expect((await user.run(["sandbox", "kill", id])).status).toBe(0);
    const deleted = await user.run(["volumes", "delete", volume.id]);
    expect([deleted.status, deleted.stdout]).toEqual([0, `Deleted volume ${volume.id}\n`]);
    expect(await user.json(["volumes", "list"])).toEqual([]);
  });
});
