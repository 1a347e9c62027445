/**
 * E2B's sleep and wake through the stock `e2b` SDK against a live Paddock server, under gVisor and
 * runc (decisions 0155 and 0190): `lifecycle.onTimeout: "pause"` pauses at the timeout,
 * `autoResume` wakes on use (and its absence leaves that to `connect`), `pause({ keepMemory:
 * false })` keeps the filesystem only, and the plan's idle timeout applies where traffic wakes it.
 */
import { testDocker } from "@paddock/runtime/testing";
import { Sandbox, SandboxNotFoundError } from "e2b";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

const stateOf = (id: string) =>
  expect.poll(async () => (await Sandbox.getInfo(id)).state, { timeout: 60_000, interval: 200 });

describe.each(["gvisor", "runc"] as const)("E2B's sleep and wake under %s", (runtime) => {
  let server: E2bServer;
  const created: Sandbox[] = [];

  beforeAll(async () => {
    server = await startE2bServer({
      config: {
        secure_runtime: { type: runtime === "runc" ? "" : "gvisor" },
        runtime: { disk_pause_after_seconds: 0 },
      },
    });
    Object.assign(process.env, server.env);
  });
  // The Free plan holds 5 sandboxes at once: each test's go when it ends.
  afterEach(async () => {
    await Promise.all(created.splice(0).map((sandbox) => sandbox.kill().catch(() => undefined)));
  });
  afterAll(async () => {
    await server?.dispose();
  });

  async function create(options: Parameters<typeof Sandbox.create>[1]): Promise<Sandbox> {
    const sandbox = await Sandbox.create("base", options);
    created.push(sandbox);
    return sandbox;
  }

  test("onTimeout pause with autoResume: paused at the timeout, woken by the next command, its files kept", async () => {
    const sandbox = await create({ timeoutMs: 3000, lifecycle: { onTimeout: "pause", autoResume: true } });
    await sandbox.files.write("/home/user/kept.txt", "kept");
    await stateOf(sandbox.sandboxId).toBe("paused");
    const info = await sandbox.getInfo();
    expect(info.lifecycle).toEqual({ onTimeout: "pause", autoResume: true });
    const paused = await Sandbox.list({ query: { state: ["paused"] } }).nextItems();
    expect(paused.map((item) => item.sandboxId)).toContain(sandbox.sandboxId);

    const run = await sandbox.commands.run("echo hi; cat /home/user/kept.txt");
    expect(run.stdout).toBe("hi\nkept");
    // Woken with the same timeout, so it runs, then pauses again.
    expect(["running", "paused"]).toContain((await sandbox.getInfo()).state);
    await stateOf(sandbox.sandboxId).toBe("paused");
  });

  test("onTimeout pause without autoResume: a command fails as on E2B; connect resumes it", async () => {
    const sandbox = await create({ timeoutMs: 3000, lifecycle: { onTimeout: "pause" } });
    await sandbox.files.write("/home/user/kept.txt", "kept");
    await stateOf(sandbox.sandboxId).toBe("paused");
    expect((await sandbox.getInfo()).lifecycle).toEqual({ onTimeout: "pause", autoResume: false });

    // The gateway's 502, which the SDK raises as the sandbox not running.
    await expect(sandbox.commands.run("echo hi")).rejects.toBeInstanceOf(SandboxNotFoundError);
    expect((await sandbox.getInfo()).state).toBe("paused");

    const connected = await Sandbox.connect(sandbox.sandboxId, { timeoutMs: 60_000 });
    const info = await connected.getInfo();
    expect(info.state).toBe("running");
    expect(info.endAt.getTime() - Date.now()).toBeGreaterThan(40_000);
    expect((await connected.commands.run("cat /home/user/kept.txt")).stdout).toBe("kept");
  });

  test("pause({ keepMemory: false }) keeps the filesystem only: connect boots it again with its files", async () => {
    const sandbox = await create({ timeoutMs: 120_000 });
    await sandbox.commands.run(
      "echo kept > /home/user/kept.txt && cat /proc/sys/kernel/random/boot_id > /home/user/boot",
    );
    await sandbox.commands.run("sleep 1000", { background: true, timeoutMs: 0 });

    expect(await sandbox.pause({ keepMemory: false })).toBe(true);
    expect((await sandbox.getInfo()).state).toBe("paused");
    // Off the host's memory: its container is stopped.
    expect((await testDocker.getContainer(sandbox.sandboxId).inspect()).State.Running).toBe(false);
    expect(await Sandbox.pause(sandbox.sandboxId, { keepMemory: false })).toBe(false);

    const connected = await Sandbox.connect(sandbox.sandboxId, { timeoutMs: 60_000 });
    const after = await connected.commands.run(
      "cat /home/user/kept.txt; pgrep -x sleep | wc -l; cat /proc/sys/kernel/random/boot_id; cat /home/user/boot",
    );
    const [kept, sleeps, now, before] = after.stdout.trim().split("\n");
    expect(kept).toBe("kept");
    // Its processes started anew: the sleep is gone.
    expect(sleeps).toBe("0");
    // Booted again: under gVisor a new kernel; runc shares the host's boot id.
    if (runtime === "gvisor") expect(now).not.toBe(before);
    else expect(now).toBe(before);
  });

  test("a sandbox paused in memory moves to disk on pause({ keepMemory: false }), and connect's reboot restarts it", async () => {
    const sandbox = await create({ timeoutMs: 120_000 });
    await sandbox.commands.run("sleep 1000", { background: true, timeoutMs: 0 });
    expect(await sandbox.pause()).toBe(true);
    expect((await testDocker.getContainer(sandbox.sandboxId).inspect()).State.Paused).toBe(true);
    expect(await sandbox.pause()).toBe(false);
    expect(await sandbox.pause({ keepMemory: false })).toBe(true);
    expect((await testDocker.getContainer(sandbox.sandboxId).inspect()).State.Running).toBe(false);
    await sandbox.connect();
    expect((await sandbox.commands.run("pgrep -x sleep | wc -l")).stdout).toBe("0\n");

    // Paused in memory, `onResume: "reboot"` resumes from the filesystem only.
    await sandbox.commands.run("sleep 1000", { background: true, timeoutMs: 0 });
    expect(await sandbox.pause()).toBe(true);
    await Sandbox.connect(sandbox.sandboxId, { onResume: "reboot" });
    expect((await sandbox.commands.run("pgrep -x sleep | wc -l")).stdout).toBe("0\n");
  });

  test("another account's sandbox is not found for pause, connect and resume; its owner's resume wakes it", async () => {
    const sandbox = await create({ timeoutMs: 120_000 });
    const apiKey = await server.keyFor(`e2b-sleep-other-${runtime}@example.com`);
    await expect(Sandbox.pause(sandbox.sandboxId, { apiKey })).rejects.toBeInstanceOf(SandboxNotFoundError);
    expect((await sandbox.getInfo()).state).toBe("running");
    expect(await sandbox.pause()).toBe(true);
    await expect(Sandbox.connect(sandbox.sandboxId, { apiKey })).rejects.toBeInstanceOf(SandboxNotFoundError);
    const resume = (key: string) =>
      fetch(`${server.env.E2B_API_URL}/sandboxes/${sandbox.sandboxId}/resume`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ timeout: 60 }),
      });
    expect((await resume(apiKey)).status).toBe(404);
    expect((await sandbox.getInfo()).state).toBe("paused");

    // Its owner's resume (E2B's deprecated call) answers once it runs, with the timeout given.
    const resumed = await resume(server.env.E2B_API_KEY);
    expect(resumed.status).toBe(201);
    expect(((await resumed.json()) as { sandboxID: string }).sandboxID).toBe(sandbox.sandboxId);
    const info = await sandbox.getInfo();
    expect(info.state).toBe("running");
    expect(info.endAt.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    expect((await resume(server.env.E2B_API_KEY)).status).toBe(409);
  });

  test("bad lifecycle and pause values are refused with 400 and E2B's error body", async () => {
    const sandbox = await create({ timeoutMs: 60_000 });
    const post = (path: string, body: unknown) =>
      fetch(`${server.env.E2B_API_URL}${path}`, {
        method: "POST",
        headers: { "x-api-key": server.env.E2B_API_KEY, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const cases: Array<[string, unknown, RegExp]> = [
      ["/v2/sandboxes", { templateID: "base", autoPause: "yes" }, /body\.autoPause/],
      ["/v2/sandboxes", { templateID: "base", autoResume: true }, /body\.autoResume/],
      ["/v2/sandboxes", { templateID: "base", autoResume: { enabled: "yes" } }, /body\.autoResume\.enabled/],
      ["/v2/sandboxes", { templateID: "base", autoPauseMemory: 0 }, /body\.autoPauseMemory/],
      [
        "/v2/sandboxes",
        { templateID: "base", autoPause: true, autoPauseMemory: false, autoResume: { enabled: true } },
        /body\.autoResume: cannot be enabled with autoPauseMemory: false/,
      ],
      [`/sandboxes/${sandbox.sandboxId}/pause`, { memory: "no" }, /body\.memory/],
      [`/v2/sandboxes/${sandbox.sandboxId}/connect`, { timeout: 60, memory: "no" }, /body\.memory/],
      [`/sandboxes/${sandbox.sandboxId}/resume`, { timeout: -1 }, /body\.timeout/],
    ];
    for (const [path, body, message] of cases) {
      const answer = await post(path, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      const error = (await answer.json()) as { code: number; message: string };
      expect(error.code).toBe(400);
      expect(error.message).toMatch(message);
    }
    expect((await sandbox.getInfo()).state).toBe("running");
  });
});

describe("the plan's idle timeout applies to sandboxes E2B's SDK creates with autoResume", () => {
  let server: E2bServer;

  beforeAll(async () => {
    server = await startE2bServer({ config: { plans: { free_idle_timeout_seconds: 3 } } });
    Object.assign(process.env, server.env);
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("an idle sandbox pauses long before its timeout; with autoResume the next call wakes it", async () => {
    const sandbox = await Sandbox.create("base", {
      timeoutMs: 300_000,
      lifecycle: { onTimeout: "pause", autoResume: true },
    });
    try {
      await sandbox.files.write("/home/user/kept.txt", "kept");
      await stateOf(sandbox.sandboxId).toBe("paused");
      // Paused for want of use, not by its timeout (minutes away).
      expect((await sandbox.getInfo()).endAt.getTime() - Date.now()).toBeGreaterThan(200_000);
      expect(await sandbox.files.read("/home/user/kept.txt")).toBe("kept");
      expect((await sandbox.getInfo()).state).toBe("running");
    } finally {
      await sandbox.kill();
    }
  });

  test("without autoResume it answers until the timeout its client set, idle or not", async () => {
    const sandbox = await Sandbox.create("base", { timeoutMs: 300_000 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 6000));
      expect((await sandbox.getInfo()).state).toBe("running");
      expect((await sandbox.commands.run("echo still")).stdout).toBe("still\n");
    } finally {
      await sandbox.kill();
    }
  });
});
