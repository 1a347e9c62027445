import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Sandbox } from "../src/model.js";
import { bashIn, openTestStack, type TestStack, testDocker, testImage } from "../src/testing/index.js";

const image = { uri: testImage };
const entrypoint = ["sleep", "infinity"];
const mebibyte = 2 ** 20;

/** Remounts `path` read-write as root in a new user and mount namespace, then writes into it. */
const remountAndWrite = (path: string) =>
  `unshare -Urm sh -c 'mount -o remount,rw ${path} 2>&1; echo owned > ${path}/x && echo WROTE'`;

const mounted = (directory: string) =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .some((line) => line.split(" ")[4] === directory);

/** Volumes of the registry (decision 0192), on real Docker under each runtime. */
describe.each(["gvisor", "runc"] as const)("volumes under %s", (secure) => {
  let t: TestStack;
  const volumesDir = () => join(resolve(t.config.server.data_dir), "volumes");
  const withVolume = (name: string, mount: { readOnly?: boolean; subPath?: string } = {}) =>
    t.stack.sandboxes.create({
      image,
      entrypoint,
      owner: "acct-a",
      volumes: [{ name: "data", mountPath: "/data", named: { name }, ...mount }],
    });

  // A host directory the operator allows, which sandboxes mount read-write.
  const hostDir = mkdtempSync(join(tmpdir(), "paddock-host-volume-"));

  beforeAll(async () => {
    t = await openTestStack({ secure, config: { docker: { allowed_host_paths: [hostDir] } } });
  });
  afterAll(async () => {
    await t?.dispose();
    rmSync(hostDir, { recursive: true, force: true });
  });

  test("a write past the size is ENOSPC and the sandbox lives on", async () => {
    const volume = await t.stack.volumes.create({ owner: "acct-a", name: "small", size: "32Mi" });
    const sandbox = await withVolume("small");
    const fill = await bashIn(sandbox.id, "dd if=/dev/zero of=/data/fill bs=1M count=100 2>&1; echo exit=$?");
    expect(fill.output).toContain("No space left on device");
    expect(fill.output).not.toContain("exit=0");
    expect(statSync(join(volumesDir(), `${volume.id}.ext4`)).blocks * 512).toBeLessThanOrEqual(32 * mebibyte);
    expect((await bashIn(sandbox.id, "echo alive")).output).toBe("alive\n");
    expect((await t.stack.sandboxes.get(sandbox.id)).status.state).toBe("Running");
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("sandboxes share a volume's files, which outlive them; deleting it unmounts and removes it", async () => {
    const volume = await t.stack.volumes.create({ owner: "acct-a", name: "shared", size: "64Mi" });
    const writer = await withVolume("shared");
    const reader = await withVolume("shared");
    await bashIn(writer.id, "echo from-the-writer > /data/note.txt");
    expect((await bashIn(reader.id, "cat /data/note.txt")).output).toBe("from-the-writer\n");
    await t.stack.sandboxes.delete(writer.id);
    await t.stack.sandboxes.delete(reader.id);

    const later = await withVolume("shared");
    expect((await bashIn(later.id, "cat /data/note.txt; ls -A /data")).output).toBe(
      "from-the-writer\nnote.txt\n",
    );
    await t.stack.sandboxes.delete(later.id);

    const directory = join(volumesDir(), volume.id);
    expect(mounted(directory)).toBe(true);
    await t.stack.volumes.delete(volume.id, "acct-a");
    expect(mounted(directory)).toBe(false);
    expect(readdirSync(volumesDir()).filter((name) => name.startsWith(volume.id))).toEqual([]);
  });

  test("a volume mounted by a sandbox that exists, paused too, cannot be deleted", async () => {
    const volume = await t.stack.volumes.create({ owner: "acct-a", name: "busy" });
    const first = await withVolume("busy");
    const second = await withVolume("busy");
    await t.stack.sandboxes.pause(second.id, "acct-a");
    await expect.poll(async () => (await t.stack.sandboxes.get(second.id)).status.state).toBe("Paused");
    const refusal = t.stack.volumes.delete(volume.id, "acct-a");
    await expect(refusal).rejects.toMatchObject({ code: "volume_in_use", status: 409 });
    await expect(refusal).rejects.toThrow(new RegExp(`${first.id}.*${second.id}|${second.id}.*${first.id}`));
    await t.stack.sandboxes.delete(first.id);
    await expect(t.stack.volumes.delete(volume.id, "acct-a")).rejects.toMatchObject({
      code: "volume_in_use",
    });
    // Resumed, it has its volume still.
    await t.stack.sandboxes.resume(second.id, "acct-a");
    await expect.poll(async () => (await t.stack.sandboxes.get(second.id)).status.state).toBe("Running");
    expect((await bashIn(second.id, "echo after-resume > /data/r.txt && cat /data/r.txt")).output).toBe(
      "after-resume\n",
    );
    await t.stack.sandboxes.delete(second.id);
    await t.stack.volumes.delete(volume.id, "acct-a");
    await expect(t.stack.volumes.get(volume.id, "acct-a")).rejects.toMatchObject({
      code: "volume_not_found",
    });
  });

  test("a read-only mount is read-only on the host, for root in a new user namespace too", async () => {
    const volume = await t.stack.volumes.create({ owner: "acct-a", name: "reference" });
    const writer = await withVolume("reference");
    await bashIn(writer.id, "echo kept > /data/kept.txt");
    const reader = await withVolume("reference", { readOnly: true });
    const attack = await bashIn(reader.id, `${remountAndWrite("/data")}; touch /data/y 2>&1; echo rc=$?`);
    expect(attack.output).not.toContain("WROTE");
    expect(attack.output).toMatch(/rc=1/);
    expect(readdirSync(join(volumesDir(), volume.id))).toEqual(["kept.txt"]);
    expect((await bashIn(reader.id, "cat /data/kept.txt")).output).toBe("kept\n");
  });

  test("a subPath is a directory inside the volume, never a symlink the volume holds", async () => {
    await t.stack.volumes.create({ owner: "acct-a", name: "paths" });
    const writer = await withVolume("paths");
    await bashIn(
      writer.id,
      "mkdir -p /data/projects/alpha && echo alpha > /data/projects/alpha/a.txt; ln -s /etc /data/escape",
    );
    const alpha = await withVolume("paths", { subPath: "projects/alpha" });
    expect((await bashIn(alpha.id, "ls /data")).output).toBe("a.txt\n");
    await expect(withVolume("paths", { subPath: "escape" })).rejects.toMatchObject({
      code: "invalid_request",
      status: 400,
    });
  });

  test("a subPath swapped for a symlink while its sandbox slept on disk: the resume refuses to mount it", async () => {
    await t.stack.volumes.create({ owner: "acct-a", name: "swap" });
    const writer = await withVolume("swap");
    await bashIn(writer.id, "mkdir /data/work && echo mine > /data/work/file");
    const sleeper = await withVolume("swap", { subPath: "work" });
    expect((await bashIn(sleeper.id, "cat /data/file")).output).toBe("mine\n");
    await t.stack.sandboxes.pause(sleeper.id, undefined, { to: "disk", keepMemory: false });
    await expect
      .poll(async () => (await t.stack.sandboxes.get(sleeper.id)).status.state, { timeout: 60_000 })
      .toBe("Paused");
    // The engine would follow it at the next start, to the host's root.
    await bashIn(writer.id, "mv /data/work /data/work.old && ln -s / /data/work");

    await expect(t.stack.sandboxes.wake(sleeper.id)).rejects.toMatchObject({ status: 502 });
    const failed = await t.stack.sandboxes.get(sleeper.id);
    expect(failed.status).toMatchObject({ state: "Failed", reason: "resume_failed" });
    expect(failed.status.message).toContain("a symlink");
    expect((await testDocker.getContainer(sleeper.id).inspect()).State.Running).toBe(false);
  });

  test("a host volume reached through a symlink a sandbox left is refused, by path and by subPath", async () => {
    const host = (path: string, subPath?: string) =>
      t.stack.sandboxes.create({
        image,
        entrypoint,
        volumes: [{ name: "host", mountPath: "/host", host: { path }, ...(subPath ? { subPath } : {}) }],
      });
    const writer = await host(hostDir);
    await bashIn(writer.id, "mkdir -p /host/real && ln -s / /host/escape");
    const refused = { code: "invalid_request", status: 400 };
    await expect(host(join(hostDir, "escape"))).rejects.toMatchObject(refused);
    await expect(host(hostDir, "escape")).rejects.toMatchObject(refused);
    await expect(host(hostDir, "escape/etc")).rejects.toMatchObject(refused);
    const fine = await host(hostDir, "real");
    expect((await bashIn(fine.id, "ls -a /host")).output).toBe(".\n..\n");
  });

  test("a restart mounts again a volume the host no longer has mounted", async () => {
    const volume = await t.stack.volumes.create({ owner: "acct-a", name: "restart" });
    const writer = await withVolume("restart");
    await bashIn(writer.id, "echo before-restart > /data/state.txt");
    await t.stack.sandboxes.delete(writer.id);
    await t.stack.close();
    const directory = join(volumesDir(), volume.id);
    execFileSync("umount", [directory]);
    expect(mounted(directory)).toBe(false);
    await t.reopen();
    expect(mounted(directory)).toBe(true);
    const reader = await withVolume("restart");
    expect((await bashIn(reader.id, "cat /data/state.txt")).output).toBe("before-restart\n");
  });
});

describe.each(["sqlite", "postgres"] as const)("the volume registry on %s", (engine) => {
  let t: TestStack;
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    t = await openTestStack({ engine, secure: "runc" });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("another owner's volume is not found, by id and by name", async () => {
    const volume = await t.stack.volumes.create({ owner: "acct-a", name: "private" });
    await expect(t.stack.volumes.get(volume.id, "acct-b")).rejects.toMatchObject({
      code: "volume_not_found",
      status: 404,
    });
    await expect(t.stack.volumes.delete(volume.id, "acct-b")).rejects.toMatchObject({
      code: "volume_not_found",
    });
    expect(await t.stack.volumes.list("acct-b")).toEqual([]);
    await expect(
      t.stack.sandboxes.create({
        image,
        entrypoint,
        owner: "acct-b",
        volumes: [{ name: "data", mountPath: "/data", named: { name: "private" } }],
      }),
    ).rejects.toMatchObject({ code: "volume_not_found", status: 404 });
    expect((await t.stack.sandboxes.list({ owner: "acct-b" })).items).toEqual([]);
    // Names are per owner: acct-b may have its own "private".
    const own = await t.stack.volumes.create({ owner: "acct-b", name: "private" });
    expect(own.id).not.toBe(volume.id);
  });

  test("concurrent creates of one name: exactly one wins", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () =>
        t.stack.volumes.create({ owner: "acct-c", name: "race", size: "16Mi" }),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results.filter((result) => result.status === "rejected")) {
      expect(result.reason).toMatchObject({ code: "volume_exists", status: 409 });
    }
    expect((await t.stack.volumes.list("acct-c")).map((volume) => volume.name)).toEqual(["race"]);
  });

  test("bad names and sizes are 400s with their own codes", async () => {
    for (const name of ["", "has space", "a/b", "x".repeat(64), "dot.ted"]) {
      await expect(t.stack.volumes.create({ owner: "acct-d", name }), name).rejects.toMatchObject({
        code: "invalid_volume_name",
        status: 400,
      });
    }
    for (const size of ["1Mi", "lots", "-1Gi", "200Gi", "0"]) {
      await expect(
        t.stack.volumes.create({ owner: "acct-d", name: "sized", size }),
        size,
      ).rejects.toMatchObject({
        code: "invalid_volume_size",
        status: 400,
      });
    }
    expect(await t.stack.volumes.list("acct-d")).toEqual([]);
  });

  test("a plan's volume count and disk count volumes", async () => {
    const quota = { plan: "Tiny", maxSandboxes: 5, maxDiskBytes: 100 * mebibyte, maxVolumes: 2 };
    await t.stack.volumes.create({ owner: "acct-e", name: "one", size: "40Mi", quota });
    await expect(
      t.stack.volumes.create({ owner: "acct-e", name: "two", size: "80Mi", quota }),
    ).rejects.toMatchObject({ code: "quota_exceeded", message: expect.stringMatching(/^disk limit/) });
    await t.stack.volumes.create({ owner: "acct-e", name: "two", size: "40Mi", quota });
    await expect(
      t.stack.volumes.create({ owner: "acct-e", name: "three", size: "16Mi", quota }),
    ).rejects.toMatchObject({ code: "quota_exceeded", message: expect.stringMatching(/^volume limit/) });
    // A sandbox's disk quota counts against the same total as the volumes.
    await expect(
      t.stack.sandboxes.create({
        image,
        entrypoint,
        owner: "acct-e",
        quota,
        resourceLimits: { "ephemeral-storage": "32Mi" },
      }),
    ).rejects.toMatchObject({ code: "quota_exceeded", message: expect.stringMatching(/^disk limit/) });
  });

  test("a runtime API pvc is the operator's volume, made on demand, and goes with its sandbox when asked", async () => {
    sandbox = await t.stack.sandboxes.create({
      image,
      entrypoint,
      volumes: [
        { name: "work", mountPath: "/work", pvc: { claimName: "work-claim", storage: "24Mi" } },
        {
          name: "scratch",
          mountPath: "/scratch",
          pvc: { claimName: "scratch-claim", deleteOnSandboxTermination: true },
        },
      ],
    });
    const operator = await t.stack.volumes.list(null);
    expect(operator.map((volume) => [volume.name, volume.sizeBytes])).toEqual([
      ["work-claim", 24 * mebibyte],
      ["scratch-claim", 2 ** 30],
    ]);
    const fill = await bashIn(sandbox.id, "dd if=/dev/zero of=/work/fill bs=1M count=50 2>&1; echo exit=$?");
    expect(fill.output).toContain("No space left on device");
    await t.stack.sandboxes.delete(sandbox.id);
    expect((await t.stack.volumes.list(null)).map((volume) => volume.name)).toEqual(["work-claim"]);
    await expect(
      t.stack.sandboxes.create({
        image,
        entrypoint,
        volumes: [
          { name: "gone", mountPath: "/gone", pvc: { claimName: "absent", createIfNotExists: false } },
        ],
      }),
    ).rejects.toMatchObject({ code: "volume_not_found" });
  });
});
