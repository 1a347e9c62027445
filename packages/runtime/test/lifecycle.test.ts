import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  bashIn,
  openTestStack,
  presenceOf,
  snapshotImagesOf,
  type TestStack,
  testDocker,
  testImage,
} from "../src/testing/index.js";

const image = { uri: testImage };
const entrypoint = ["sleep", "infinity"];

async function volumeExists(name: string): Promise<boolean> {
  return testDocker
    .getVolume(name)
    .inspect()
    .then(
      () => true,
      () => false,
    );
}

describe.each(["sqlite", "postgres"] as const)("sandbox lifecycle on %s under gVisor", (engine) => {
  let t: TestStack;
  const allowedDir = mkdtempSync(join(tmpdir(), "paddock-allowed-"));
  writeFileSync(join(allowedDir, "hello.txt"), "from the host\n");

  beforeAll(async () => {
    t = await openTestStack({
      engine,
      secure: "gvisor",
      config: { docker: { allowed_host_paths: [allowedDir] } },
    });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("pause and resume go through Pausing → Paused and Resuming → Running", async () => {
    const sandbox = await t.stack.sandboxes.create({ image, entrypoint });
    // Pausing a gVisor sandbox takes over a second on a busy machine: poll past expect's 1 s default.
    const state = () =>
      expect.poll(async () => (await t.stack.sandboxes.get(sandbox.id)).status.state, { timeout: 30_000 });
    try {
      const pausing = await t.stack.sandboxes.pause(sandbox.id);
      expect(["Pausing", "Paused"]).toContain(pausing.status.state);
      await state().toBe("Paused");
      expect((await testDocker.getContainer(sandbox.id).inspect()).State.Paused).toBe(true);
      await expect(t.stack.sandboxes.pause(sandbox.id)).rejects.toMatchObject({
        code: "invalid_state",
        status: 409,
      });
      await t.stack.sandboxes.resume(sandbox.id);
      await state().toBe("Running");
      expect((await bashIn(sandbox.id, "echo back")).output).toBe("back\n");
    } finally {
      // A failure above must not leave a sandbox behind for the tests that count them.
      await t.stack.sandboxes.delete(sandbox.id).catch(() => undefined);
    }
    await expect(t.stack.sandboxes.get(sandbox.id)).rejects.toMatchObject({ code: "sandbox_not_found" });
  });

  test("snapshots capture the filesystem and restore into a new sandbox, without the sandbox's env", async () => {
    const source = await t.stack.sandboxes.create({ image, entrypoint, env: { PLAIN: "plain-value" } });
    await bashIn(source.id, "echo kept > /root/state.txt");
    const snapshot = await t.stack.snapshots.create(source.id, { name: "before-import" });
    try {
      expect(snapshot.status.state).toBe("Creating");
      await expect
        .poll(async () => (await t.stack.snapshots.get(snapshot.id)).status.state, { timeout: 60_000 })
        .not.toBe("Creating");
      // On failure, the status's message says why.
      expect((await t.stack.snapshots.get(snapshot.id)).status).toMatchObject({ state: "Ready" });
      const listed = await t.stack.snapshots.list({
        sandboxId: source.id,
        name: "before-import",
        states: ["Ready"],
      });
      expect(listed.items.map((item) => item.id)).toEqual([snapshot.id]);
      // The image's configuration is the sandbox image's own: no caller env, no execd token.
      const captured = await testDocker.getImage(`paddock-snapshot:${snapshot.id}`).inspect();
      const own = await testDocker.getImage(testImage).inspect();
      const config = JSON.stringify(captured.Config);
      expect(config).not.toContain("plain-value");
      expect(config).not.toContain(t.stack.sandboxes.tokens(source.id).execd);
      expect(captured.Config.Env).toEqual(own.Config.Env);
      expect(captured.Config.Entrypoint).toEqual(own.Config.Entrypoint);
      expect(captured.Config.Labels).toEqual({
        ...own.Config.Labels,
        "paddock.snapshot.instance": t.config.server.instance,
      });

      const restored = await t.stack.sandboxes.create({ snapshotId: snapshot.id });
      expect(restored.snapshotId).toBe(snapshot.id);
      expect(restored.entrypoint).toEqual(entrypoint);
      expect((await bashIn(restored.id, "cat /root/state.txt")).output).toBe("kept\n");
      expect((await bashIn(restored.id, 'echo "[$PLAIN]"')).output).toBe("[]\n");
      await t.stack.sandboxes.delete(restored.id);
    } finally {
      await t.stack.sandboxes.delete(source.id);
      await expect
        .poll(async () => (await t.stack.snapshots.get(snapshot.id)).status.state, { timeout: 60_000 })
        .not.toBe("Creating");
      await t.stack.snapshots.delete(snapshot.id);
    }
    await expect(t.stack.snapshots.get(snapshot.id)).rejects.toMatchObject({ code: "snapshot_not_found" });
    expect(await snapshotImagesOf(t.config.server.instance)).toEqual([]);
  });

  test("refuses what the host cannot do, with a clear 400", async () => {
    await expect(
      t.stack.sandboxes.create({ image, entrypoint, resourceLimits: { gpu: "1" } }),
    ).rejects.toMatchObject({
      code: "gpu_unavailable",
      status: 400,
    });
    await expect(
      t.stack.sandboxes.create({
        image,
        entrypoint,
        volumes: [{ name: "etc", mountPath: "/host", host: { path: "/etc" } }],
      }),
    ).rejects.toMatchObject({ code: "host_path_not_allowed", status: 400 });
    await expect(
      t.stack.sandboxes.create({
        image,
        entrypoint,
        volumes: [{ name: "up", mountPath: "/x", host: { path: `${allowedDir}/../etc` } }],
      }),
    ).rejects.toMatchObject({ code: "host_path_not_allowed" });
    await expect(
      t.stack.sandboxes.create({ image, entrypoint, metadata: { "bad key!": "x" } }),
    ).rejects.toMatchObject({
      code: "invalid_request",
    });
    expect((await t.stack.sandboxes.list({})).items).toHaveLength(0);
  });

  test("mounts an allow-listed host path", async () => {
    const sandbox = await t.stack.sandboxes.create({
      image,
      entrypoint,
      volumes: [{ name: "data", mountPath: "/data", readOnly: true, host: { path: allowedDir } }],
    });
    expect((await bashIn(sandbox.id, "cat /data/hello.txt")).output).toBe("from the host\n");
    expect((await bashIn(sandbox.id, "touch /data/x 2>&1; echo rc=$?")).output).toMatch(/rc=1/);
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("a create that fails half-way leaves no container, volume or record behind", async () => {
    const volume = `paddock-test-${Date.now()}`;
    await expect(
      t.stack.sandboxes.create({
        image,
        entrypoint,
        volumes: [
          {
            name: "scratch",
            mountPath: "/scratch",
            pvc: { claimName: volume, deleteOnSandboxTermination: true },
          },
          { name: "kept", mountPath: "/kept", pvc: { claimName: `${volume}-kept` } },
          // Allowed, but absent on the host: the engine refuses the container after the volume was made.
          { name: "missing", mountPath: "/missing", host: { path: join(allowedDir, "does-not-exist") } },
        ],
      }),
    ).rejects.toMatchObject({
      code: "invalid_request",
      status: 400,
      message: expect.stringMatching(/does not exist/),
    });
    expect(await volumeExists(volume)).toBe(false);
    // Even a volume that would outlive a working sandbox goes when its create fails.
    expect(await volumeExists(`${volume}-kept`)).toBe(false);
    expect(await t.stack.volumes.list()).toEqual([]);
    const leftovers = await testDocker.listContainers({
      all: true,
      filters: { label: [`paddock.instance=${t.config.server.instance}`] },
    });
    expect(leftovers).toHaveLength(0);
    expect((await t.stack.sandboxes.list({})).items).toHaveLength(0);
  });

  test("an image that is absent and cannot be pulled answers image_not_found", async () => {
    await expect(
      t.stack.sandboxes.create({ image: { uri: "localhost:1/paddock/absent:never" }, entrypoint }),
    ).rejects.toMatchObject({ code: "image_not_found", status: 400 });
  });

  test("expired sandboxes are reaped, also when they expired while the server was down", async () => {
    const soon = await t.stack.sandboxes.create({ image, entrypoint, timeout: 1 });
    await expect.poll(() => presenceOf(t.stack.sandboxes, soon.id), { timeout: 15_000 }).toBe("gone");
    expect(
      await testDocker
        .getContainer(soon.id)
        .inspect()
        .catch(() => undefined),
    ).toBeUndefined();

    const later = await t.stack.sandboxes.create({ image, entrypoint, timeout: 2 });
    await t.stack.close();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await t.reopen();
    await expect.poll(() => presenceOf(t.stack.sandboxes, later.id), { timeout: 15_000 }).toBe("gone");
  });

  test("a sandbox whose container dies becomes Failed; one that vanished while the server was down too", async () => {
    const crashing = await t.stack.sandboxes.create({ image, entrypoint });
    await testDocker.getContainer(crashing.id).kill();
    await expect
      .poll(async () => (await t.stack.sandboxes.get(crashing.id)).status.state, { timeout: 15_000 })
      .toBe("Failed");
    expect((await t.stack.sandboxes.get(crashing.id)).status.reason).toBe("container_exited");

    const vanishing = await t.stack.sandboxes.create({ image, entrypoint });
    await t.stack.close();
    await testDocker.getContainer(vanishing.id).remove({ force: true });
    await t.reopen();
    const failed = await t.stack.sandboxes.get(vanishing.id);
    expect(failed.status).toMatchObject({ state: "Failed", reason: "container_vanished" });
    await t.stack.sandboxes.delete(vanishing.id);
    await t.stack.sandboxes.delete(crashing.id);
  });

  test("metadata is a JSON merge patch and filters the list", async () => {
    const sandbox = await t.stack.sandboxes.create({ image, entrypoint, metadata: { team: "a", name: "x" } });
    const patched = await t.stack.sandboxes.patchMetadata(sandbox.id, { team: "b", name: null, extra: "1" });
    expect(patched.metadata).toEqual({ team: "b", extra: "1" });
    expect((await t.stack.sandboxes.list({ metadata: { team: "b" } })).items.map((s) => s.id)).toEqual([
      sandbox.id,
    ]);
    expect((await t.stack.sandboxes.list({ metadata: { team: "a" } })).items).toHaveLength(0);
    expect((await t.stack.sandboxes.list({ states: ["Paused"] })).items).toHaveLength(0);
    await t.stack.sandboxes.delete(sandbox.id);
  });
});
