import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { CreateSandboxInput, Sandbox } from "../src/model.js";
import {
  openTestStack,
  runThroughExecd,
  type TestStack,
  testDocker,
  testImage,
} from "../src/testing/index.js";

/**
 * Pauses to disk that keep processes and memory: gVisor sandboxes on runsc's own network stack
 * (decision 0194) and runc sandboxes with CRIU (decision 0196) are checkpointed, and restored from
 * the checkpoint on resume.
 */
const image = { uri: testImage };
const entrypoint = ["sleep", "infinity"];

/** A shell counting in its own memory; the file only reports what the shell holds. */
const counter =
  '(secret=$RANDOM$RANDOM; i=0; while :; do i=$((i+1)); echo "$$ $secret $i" > /root/count; sleep 0.2; done) >/dev/null 2>&1 &';

/** Runs `command` through execd, as every route does (so it resolves, and wakes, the sandbox). */
const run = (t: TestStack, id: string, command: string) => runThroughExecd(t.stack.sandboxes, id, command);

function parseCount(line: string): { pid: string; secret: string; count: number } {
  const [pid = "", secret = "", count = "0"] = line.trim().split(" ");
  return { pid, secret, count: Number(count) };
}

/** Where Docker keeps a container's checkpoints. */
async function checkpointsDir(id: string): Promise<string> {
  const root = ((await testDocker.info()) as { DockerRootDir: string }).DockerRootDir;
  const container = await testDocker.getContainer(id).inspect();
  return join(root, "containers", container.Id, "checkpoints");
}

const runtimes = [
  {
    name: "gVisor on its own network stack",
    secure: "gvisor",
    netstack: "runsc-netstack",
    // The engine runtime of a sandbox with and without a network policy.
    engineRuntime: "runsc-netstack",
    policyEngineRuntime: "runsc",
  },
  {
    name: "runc with CRIU",
    secure: "runc",
    netstack: "",
    engineRuntime: "runc",
    policyEngineRuntime: "runc",
  },
] as const;

describe.each(runtimes)("pauses to disk with memory, under $name", (runtime) => {
  let t: TestStack;

  beforeAll(async () => {
    t = await openTestStack({
      secure: runtime.secure,
      config: {
        runtime: { disk_pause_after_seconds: 0 },
        secure_runtime: { netstack_runtime: runtime.netstack },
      },
    });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  async function create(input: Partial<CreateSandboxInput> = {}): Promise<Sandbox> {
    return t.stack.sandboxes.create({ image, entrypoint, ...input });
  }
  const stateOf = (id: string) =>
    expect.poll(async () => (await t.stack.sandboxes.get(id)).status.state, {
      message: `sandbox ${id}`,
      timeout: 60_000,
      interval: 100,
    });
  const count = async (id: string) => parseCount(await run(t, id, "cat /root/count"));

  async function startCounting(id: string): Promise<{ pid: string; secret: string; count: number }> {
    // Through execd, as a user's command is: a process the engine started with `docker exec`
    // holds host descriptors for its stdio, which runsc cannot restore.
    await run(t, id, counter);
    await expect.poll(async () => (await count(id)).count, { timeout: 30_000 }).toBeGreaterThan(2);
    return count(id);
  }

  test("a counting process and its memory survive, the container stops meanwhile, the kernel is the same", async () => {
    const sandbox = await create();
    expect((await testDocker.getContainer(sandbox.id).inspect()).HostConfig.Runtime).toBe(
      runtime.engineRuntime,
    );
    await run(t, sandbox.id, "echo kept > /root/kept.txt; cat /proc/sys/kernel/random/boot_id > /root/boot");
    const before = await startCounting(sandbox.id);

    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await stateOf(sandbox.id).toBe("Paused");
    expect((await t.stack.sandboxes.get(sandbox.id)).pause).toEqual({ to: "disk", memoryPreserved: true });
    // Off the host's memory: its container has ended.
    const container = await testDocker.getContainer(sandbox.id).inspect();
    expect(container.State.Running).toBe(false);
    expect(container.State.Paused).toBe(false);

    await t.stack.sandboxes.resume(sandbox.id);
    await stateOf(sandbox.id).toBe("Running");
    const after = await count(sandbox.id);
    expect([after.pid, after.secret]).toEqual([before.pid, before.secret]);
    expect(after.count).toBeGreaterThanOrEqual(before.count);
    await expect
      .poll(async () => (await count(sandbox.id)).count, { timeout: 30_000 })
      .toBeGreaterThan(after.count);
    const files = await run(t, sandbox.id, "cat /root/kept.txt /proc/sys/kernel/random/boot_id /root/boot");
    const [kept, bootNow, bootBefore] = files.trim().split("\n");
    expect(kept).toBe("kept");
    expect(bootNow).toBe(bootBefore);
    const log = (await t.stack.sandboxes.diagnostics(sandbox.id, "events", "lifecycle")).text;
    expect(log).toContain("processes and memory kept");
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("io_uring is not offered: no checkpoint could save a ring, and the kernel's interface stays shut", async () => {
    const sandbox = await create();
    // io_uring_setup(1, params): 425 on x86-64 and arm64 alike.
    const answer = await run(
      t,
      sandbox.id,
      `perl -e '$p = "\\0" x 120; print syscall(425, 1, $p), " ", $! + 0'`,
    );
    const [result, errno] = answer.trim().split(" ").map(Number);
    expect(result).toBe(-1);
    expect([1, 38]).toContain(errno); // EPERM from runc's seccomp profile, ENOSYS from gVisor
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("a sandbox paused to disk with memory resumes so after the server restarts", async () => {
    const sandbox = await create();
    const before = await startCounting(sandbox.id);
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await stateOf(sandbox.id).toBe("Paused");

    await t.stack.close();
    await t.reopen();
    const reopened = await t.stack.sandboxes.get(sandbox.id);
    expect(reopened.status.state).toBe("Paused");
    expect(reopened.pause).toEqual({ to: "disk", memoryPreserved: true });

    await t.stack.sandboxes.resume(sandbox.id);
    await stateOf(sandbox.id).toBe("Running");
    const after = await count(sandbox.id);
    expect([after.pid, after.secret]).toEqual([before.pid, before.secret]);
    expect(after.count).toBeGreaterThanOrEqual(before.count);
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("a server stopped between a checkpoint and its record: the reconciler finds the checkpoint", async () => {
    const sandbox = await create();
    const before = await startCounting(sandbox.id);
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await stateOf(sandbox.id).toBe("Paused");
    // As a server killed after the checkpoint was written and before the move was recorded.
    await t.stack.database.db
      .updateTable("sandboxes")
      .set({ state: "Pausing", paused_to: "disk", memory_preserved: 0 })
      .where("id", "=", sandbox.id)
      .execute();

    await t.stack.close();
    await t.reopen();
    const reopened = await t.stack.sandboxes.get(sandbox.id);
    expect([reopened.status.state, reopened.pause]).toEqual([
      "Paused",
      { to: "disk", memoryPreserved: true },
    ]);
    await t.stack.sandboxes.resume(sandbox.id);
    await stateOf(sandbox.id).toBe("Running");
    expect((await count(sandbox.id)).secret).toBe(before.secret);
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("a checkpoint that fails leaves the sandbox running, or paused in memory, with the reason logged", async () => {
    const sandbox = await create();
    const before = await startCounting(sandbox.id);
    // Docker cannot make the checkpoint's directory where a file stands.
    const dir = await checkpointsDir(sandbox.id);
    await rm(dir, { recursive: true, force: true });
    await writeFile(dir, "in the way\n");
    try {
      await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
      await stateOf(sandbox.id).toBe("Running");
      const running = await t.stack.sandboxes.get(sandbox.id);
      expect(running.status.reason).toBe("pause_failed");
      expect(running.pause).toBeUndefined();
      const after = await count(sandbox.id);
      expect([after.pid, after.secret]).toEqual([before.pid, before.secret]);

      await t.stack.sandboxes.pause(sandbox.id);
      await stateOf(sandbox.id).toBe("Paused");
      await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
      await expect
        .poll(async () => (await t.stack.sandboxes.get(sandbox.id)).status.reason, { timeout: 60_000 })
        .toBe("pause_failed");
      const frozen = await t.stack.sandboxes.get(sandbox.id);
      expect(frozen.status.state).toBe("Paused");
      expect(frozen.pause).toEqual({ to: "memory" });
      expect((await testDocker.getContainer(sandbox.id).inspect()).State.Paused).toBe(true);
      const log = (await t.stack.sandboxes.diagnostics(sandbox.id, "events", "lifecycle")).text;
      expect(log.match(/pause to disk failed: checkpoint failed/g)).toHaveLength(2);
    } finally {
      await rm(dir, { force: true });
    }
    await t.stack.sandboxes.resume(sandbox.id);
    await stateOf(sandbox.id).toBe("Running");
    expect((await count(sandbox.id)).secret).toBe(before.secret);
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("a restore that fails marks the sandbox Failed and keeps its filesystem", async () => {
    const sandbox = await create();
    await run(t, sandbox.id, "echo kept > /root/kept.txt");
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await stateOf(sandbox.id).toBe("Paused");
    await rm(await checkpointsDir(sandbox.id), { recursive: true, force: true });

    await expect(t.stack.sandboxes.wake(sandbox.id)).rejects.toMatchObject({ status: 502 });
    const failed = await t.stack.sandboxes.get(sandbox.id);
    expect(failed.status).toMatchObject({ state: "Failed", reason: "resume_failed" });
    const archive = await testDocker.getContainer(sandbox.id).getArchive({ path: "/root/kept.txt" });
    const chunks: Buffer[] = [];
    for await (const chunk of archive) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString("latin1")).toContain("kept\n");
    await t.stack.sandboxes.delete(sandbox.id);
  });

  test("a sandbox with a network policy pauses to disk with its files only", async () => {
    const sandbox = await create({ networkPolicy: { defaultAction: "deny", egress: [] } });
    expect((await testDocker.getContainer(sandbox.id).inspect()).HostConfig.Runtime).toBe(
      runtime.policyEngineRuntime,
    );
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await stateOf(sandbox.id).toBe("Paused");
    expect((await t.stack.sandboxes.get(sandbox.id)).pause).toEqual({ to: "disk", memoryPreserved: false });
    await t.stack.sandboxes.delete(sandbox.id);
  });
});
