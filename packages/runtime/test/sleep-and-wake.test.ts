import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ExecdClient } from "../src/execd/client.js";
import type { CreateSandboxInput, Sandbox } from "../src/model.js";
import {
  bashIn,
  openTestStack,
  presenceOf,
  runThroughExecd,
  type TestStack,
  testDocker,
  testImage,
} from "../src/testing/index.js";

/**
 * Sandboxes that sleep and wake (decision 0190), on real Docker under each runtime: pauses in
 * memory and to disk, the reaper's idle, timeout, disk and retention rules, and resume on use
 * through `target`, the gate every route passes.
 */
const image = { uri: testImage };
const entrypoint = ["sleep", "infinity"];

/** Runs `command` through execd, as every route does (so it resolves, and wakes, the sandbox). */
const run = (t: TestStack, id: string, command: string) => runThroughExecd(t.stack.sandboxes, id, command);

describe.each(["gvisor", "runc"] as const)("sandboxes that sleep and wake, under %s", (secure) => {
  let t: TestStack;
  const created: string[] = [];

  beforeAll(async () => {
    t = await openTestStack({ secure, config: { runtime: { disk_pause_after_seconds: 0 } } });
  });
  afterAll(async () => {
    for (const id of created) await t?.stack.sandboxes.delete(id).catch(() => undefined);
    await t?.dispose();
  });

  async function create(input: Partial<CreateSandboxInput> = {}): Promise<Sandbox> {
    const sandbox = await t.stack.sandboxes.create({ image, entrypoint, ...input });
    created.push(sandbox.id);
    return sandbox;
  }
  const stateOf = (id: string) =>
    expect.poll(async () => (await t.stack.sandboxes.get(id)).status.state, {
      timeout: 60_000,
      interval: 100,
    });

  test("a pause to disk without memory stops the container, keeps every file, and a resume starts it again", async () => {
    const sandbox = await create();
    expect(sandbox.lifecycle).toMatchObject({ onTimeout: "kill", autoResume: true, keepMemory: true });
    await bashIn(
      sandbox.id,
      "echo kept > /root/kept.txt && (sleep 1000 &) && cat /proc/sys/kernel/random/boot_id > /root/boot",
    );
    // (With its memory, runc's CRIU would keep the sleep: checkpoints.test.ts.)
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk", keepMemory: false });
    await stateOf(sandbox.id).toBe("Paused");
    const paused = await t.stack.sandboxes.get(sandbox.id);
    expect(paused.pause).toEqual({ to: "disk", memoryPreserved: false });
    // Off the host's memory: no process of it is left.
    expect((await testDocker.getContainer(sandbox.id).inspect()).State.Running).toBe(false);
    // Already there: a second pause is refused, as a second pause in memory is.
    await expect(t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" })).rejects.toMatchObject({
      status: 409,
    });

    await t.stack.sandboxes.resume(sandbox.id);
    await stateOf(sandbox.id).toBe("Running");
    const after = await t.stack.sandboxes.get(sandbox.id);
    expect(after.pause).toBeUndefined();
    expect(await run(t, sandbox.id, "cat /root/kept.txt; pgrep -x sleep | wc -l")).toBe("kept\n1\n");
    // The sandbox booted again: under gVisor a new kernel; runc shares the host's boot id.
    const boot = await run(t, sandbox.id, "cat /proc/sys/kernel/random/boot_id; cat /root/boot");
    const [now, before] = boot.trim().split("\n");
    if (secure === "gvisor") expect(now).not.toBe(before);
    else expect(now).toBe(before);
  });

  test("a paused sandbox wakes on use: concurrent calls share one resume and are all served", async () => {
    const sandbox = await create();
    await t.stack.sandboxes.pause(sandbox.id);
    await stateOf(sandbox.id).toBe("Paused");
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => run(t, sandbox.id, `echo ${i}`)));
    expect(answers).toEqual(Array.from({ length: 12 }, (_, i) => `${i}\n`));
    expect((await t.stack.sandboxes.get(sandbox.id)).status.state).toBe("Running");
    const log = (await t.stack.sandboxes.diagnostics(sandbox.id, "events", "lifecycle")).text;
    expect(log.match(/resume from memory requested/g)).toHaveLength(1);

    // From disk too: the call waits for the sandbox to start again.
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await stateOf(sandbox.id).toBe("Paused");
    expect(await run(t, sandbox.id, "echo awake")).toBe("awake\n");
  });

  test("without autoResume a paused sandbox refuses calls with 409 and stays paused", async () => {
    const sandbox = await create({ lifecycle: { autoResume: false } });
    await t.stack.sandboxes.pause(sandbox.id);
    await stateOf(sandbox.id).toBe("Paused");
    await expect(run(t, sandbox.id, "echo no")).rejects.toMatchObject({ status: 409, code: "invalid_state" });
    expect((await t.stack.sandboxes.get(sandbox.id)).status.state).toBe("Paused");
  });

  test("an idle sandbox pauses; one whose command still runs stays awake unless told otherwise", async () => {
    const idle = await create({ lifecycle: { idleTimeout: 2 } });
    const working = await create({ lifecycle: { idleTimeout: 2 } });
    const ignoring = await create({ lifecycle: { idleTimeout: 2, processesKeepAwake: false } });
    for (const { id } of [working, ignoring]) {
      const execd = await ExecdClient.of(t.stack.sandboxes, id);
      for await (const event of execd.runCommand({ command: "sleep 600", background: true })) void event;
    }
    await stateOf(idle.id).toBe("Paused");
    await stateOf(ignoring.id).toBe("Paused");
    expect((await t.stack.sandboxes.get(idle.id)).status.reason).toBe("paused");
    expect((await t.stack.sandboxes.get(idle.id)).pause).toEqual({ to: "memory" });
    // Asked well past its idle time, and still Running: execd had work in hand.
    expect((await t.stack.sandboxes.get(working.id)).status.state).toBe("Running");
    const log = (await t.stack.sandboxes.diagnostics(idle.id, "events", "lifecycle")).text;
    expect(log).toContain("idle_pause to memory requested");
  });

  test("every use moves the idle time on", async () => {
    const sandbox = await create({ lifecycle: { idleTimeout: 3 } });
    const until = Date.now() + 6000;
    while (Date.now() < until) {
      await run(t, sandbox.id, "true");
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect((await t.stack.sandboxes.get(sandbox.id)).status.state).toBe("Running");
    await stateOf(sandbox.id).toBe("Paused");
  });

  test("onTimeout pause: the timeout pauses it, and a resume re-arms the same timeout", async () => {
    const sandbox = await create({ timeout: 2, lifecycle: { onTimeout: "pause" } });
    await stateOf(sandbox.id).toBe("Paused");
    const paused = await t.stack.sandboxes.get(sandbox.id);
    expect(paused.expiresAt).toBeUndefined();
    const woken = await t.stack.sandboxes.wake(sandbox.id);
    expect(woken.status.state).toBe("Running");
    const left = Date.parse(woken.expiresAt ?? "") - Date.now();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(2000);
    await stateOf(sandbox.id).toBe("Paused");
  });

  test("onTimeout kill: a paused sandbox outlives its expiry, and a resume re-arms the same timeout", async () => {
    const sandbox = await create({ timeout: 2 });
    await t.stack.sandboxes.pause(sandbox.id);
    await stateOf(sandbox.id).toBe("Paused");
    // Past its expiry, the reaper (every 200 ms here) leaves it asleep.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const asleep = await t.stack.sandboxes.get(sandbox.id);
    expect(asleep.status.state).toBe("Paused");
    expect(Date.parse(asleep.expiresAt ?? "")).toBeLessThan(Date.now());
    const woken = await t.stack.sandboxes.wake(sandbox.id);
    const left = Date.parse(woken.expiresAt ?? "") - Date.now();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(2000);
    await expect.poll(() => presenceOf(t.stack.sandboxes, sandbox.id), { timeout: 30_000 }).toBe("gone");
  });

  test("a sandbox paused past its maxPaused is deleted", async () => {
    const sandbox = await create({ lifecycle: { maxPaused: 1 } });
    await t.stack.sandboxes.pause(sandbox.id);
    await expect.poll(() => presenceOf(t.stack.sandboxes, sandbox.id), { timeout: 30_000 }).toBe("gone");
    expect(
      await testDocker
        .getContainer(sandbox.id)
        .inspect()
        .then(
          () => true,
          () => false,
        ),
    ).toBe(false);
  });

  test("a resume from disk whose container is gone marks it Failed with the reason", async () => {
    const sandbox = await create();
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await stateOf(sandbox.id).toBe("Paused");
    await testDocker.getContainer(sandbox.id).remove({ force: true });
    await expect(t.stack.sandboxes.wake(sandbox.id)).rejects.toMatchObject({ code: "endpoint_unavailable" });
    const failed = await t.stack.sandboxes.get(sandbox.id);
    expect(failed.status).toMatchObject({ state: "Failed", reason: "resume_failed" });
  });

  test("bad lifecycles are refused with 400 before anything is created", async () => {
    for (const lifecycle of [
      { onTimeout: "sleep" },
      { idleTimeout: 0 },
      { idleTimeout: 1.5 },
      { maxPaused: -1 },
      { autoResume: "yes" },
    ]) {
      await expect(
        t.stack.sandboxes.create({
          image,
          entrypoint,
          lifecycle: lifecycle as CreateSandboxInput["lifecycle"],
        }),
      ).rejects.toMatchObject({ status: 400, code: "invalid_request" });
    }
  });
});

describe("a sandbox paused in memory moves to disk after runtime.disk_pause_after_seconds", () => {
  let t: TestStack;

  beforeAll(async () => {
    t = await openTestStack({ secure: "gvisor", config: { runtime: { disk_pause_after_seconds: 1 } } });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("Paused in memory, then Pausing, then Paused on disk, its files kept", async () => {
    const sandbox = await t.stack.sandboxes.create({ image, entrypoint });
    try {
      await bashIn(sandbox.id, "echo kept > /root/kept.txt");
      await t.stack.sandboxes.pause(sandbox.id);
      await expect
        .poll(
          async () => {
            const { status, pause } = await t.stack.sandboxes.get(sandbox.id);
            return { state: status.state, pause };
          },
          { timeout: 60_000, interval: 50 },
        )
        .toEqual({ state: "Paused", pause: { to: "disk", memoryPreserved: false } });
      expect((await testDocker.getContainer(sandbox.id).inspect()).State.Running).toBe(false);
      expect(await run(t, sandbox.id, "cat /root/kept.txt")).toBe("kept\n");
    } finally {
      await t.stack.sandboxes.delete(sandbox.id).catch(() => undefined);
    }
  });
});
