import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, deriveSecret, loadConfig, newId, newSecret } from "@paddock/common";
import { createTestDatabase } from "@paddock/db";
import { afterAll, describe, expect, test } from "vitest";
import { openRuntimeStack, type RuntimeStack } from "../src/stack.js";
import { bashIn, openTestStack, testDocker } from "../src/testing/index.js";

const fixture = join(import.meta.dirname, "fixtures/create-storm.ts");

async function runningContainersOf(instance: string): Promise<string[]> {
  const containers = await testDocker.listContainers({
    filters: { label: [`paddock.instance=${instance}`], status: ["running"] },
  });
  return containers.map((container) => container.Labels["paddock.sandbox"] ?? "");
}

async function containersOf(instance: string): Promise<string[]> {
  const containers = await testDocker.listContainers({
    all: true,
    filters: { label: [`paddock.instance=${instance}`] },
  });
  return containers.map((container) => container.Labels["paddock.sandbox"] ?? "").sort();
}

describe("a server killed while creates are in flight", () => {
  let stack: RuntimeStack | undefined;
  const database = createTestDatabase("sqlite");

  afterAll(async () => {
    if (stack) {
      const { items } = await stack.sandboxes.list({ pageSize: 1000 });
      await Promise.all(items.map((sandbox) => stack?.sandboxes.delete(sandbox.id)));
      await stack.close();
    }
    await (await database).drop();
  });

  test("comes back without the creates no client heard of: containers removed, nothing billed, renewals kept", async () => {
    const instance = newId("crash");
    const secretKey = newSecret();
    const overrides = {
      server: { data_dir: mkdtempSync(join(tmpdir(), "paddock-crash-")), secret_key: secretKey, instance },
      database: { url: (await database).url },
      runtime: { execd_image: process.env.PADDOCK_TEST_CONFIG_RUNTIME_EXECD_IMAGE ?? "paddock/execd:0.1.0" },
    };
    const child = spawn(
      process.execPath,
      ["--conditions=@paddock/source", "--import", "tsx", fixture, JSON.stringify(overrides)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    await expect.poll(() => output, { timeout: 60_000, interval: 50 }).toContain("in-flight");
    const [, renewedId, renewedExpiry] = /renewed (\S+) (\S+)/.exec(output) ?? [];

    // Freeze the server at a moment when a create has its container running but is still
    // Pending, let that sandbox's execd come up (the engine goes on without the server), then
    // kill the server: the create is complete on the engine's side, yet no client got its id.
    const observer = await (await database).open();
    const pendingIds = async () =>
      (await observer.db.selectFrom("sandboxes").select("id").where("state", "=", "Pending").execute()).map(
        (row) => row.id,
      );
    let caught: string[] = [];
    for (const deadline = Date.now() + 60_000; caught.length === 0 && Date.now() < deadline; ) {
      child.kill("SIGSTOP");
      const running = new Set(await runningContainersOf(instance));
      caught = (await pendingIds()).filter((id) => running.has(id));
      if (caught.length === 0) {
        child.kill("SIGCONT");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    expect(caught.length).toBeGreaterThan(0);
    const answered = caught[0] as string;
    const address = (await testDocker.getContainer(answered).inspect()).NetworkSettings.Networks[
      "paddock-sandboxes"
    ]?.IPAddress;
    await expect
      .poll(
        async () =>
          (
            await fetch(`http://${address}:44772/ping`, {
              headers: { "X-EXECD-ACCESS-TOKEN": deriveSecret(secretKey, "execd", answered) },
              signal: AbortSignal.timeout(1000),
            }).catch(() => undefined)
          )?.status,
        { timeout: 30_000, interval: 100 },
      )
      .toBe(200);
    const pending = await pendingIds();
    expect(pending).toContain(answered);
    child.kill("SIGKILL");
    await once(child, "exit");
    await observer.close();

    stack = await openRuntimeStack(loadConfig({ env: {}, overrides }), createLogger({ level: "warn" }));
    const { items } = await stack.sandboxes.list({ pageSize: 1000 });
    // Only the sandbox whose create answered is left; its renewal is kept.
    expect(items.map((sandbox) => sandbox.id)).toEqual([renewedId]);
    expect(items[0]?.status.state).toBe("Running");
    expect(items[0]?.expiresAt).toBe(renewedExpiry);
    expect(await containersOf(instance)).toEqual([renewedId]);
    // The interrupted creates were never metered.
    for (const table of ["usage_meters", "sandbox_usage"] as const) {
      const rows = await stack.database.db
        .selectFrom(table)
        .select("sandbox_id")
        .where("sandbox_id", "in", pending)
        .execute();
      expect(rows, table).toEqual([]);
    }
    const target = await stack.sandboxes.target(renewedId as string, 44772);
    const response = await fetch(`http://${target.host}:${target.port}/ping`, {
      headers: { "X-EXECD-ACCESS-TOKEN": stack.sandboxes.tokens(renewedId as string).execd },
    });
    expect(response.status).toBe(200);
  });
});

describe("the reconciler", () => {
  test("removes the staging commit of a snapshot its server was capturing when it stopped", async () => {
    const instance = newId("test");
    const container = await testDocker.createContainer({
      Image: "paddock/base:bookworm",
      Cmd: ["true"],
      Labels: { "paddock.instance": instance },
    });
    await container.commit({ repo: "paddock-snapshot-staging", tag: "snap-interrupted" });
    await container.remove({ force: true });
    const staged = () =>
      testDocker
        .getImage("paddock-snapshot-staging:snap-interrupted")
        .inspect()
        .then(
          () => true,
          () => false,
        );
    expect(await staged()).toBe(true);
    const restarted = await openTestStack({ secure: "runc", config: { server: { instance } } });
    try {
      expect(await staged()).toBe(false);
    } finally {
      await restarted.dispose();
    }
  });

  test("adopts a running container the database does not know, and removes one that cannot be adopted", async () => {
    const first = await openTestStack({ secure: "runc" });
    const kept = await first.stack.sandboxes.create({
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
      metadata: { team: "kept" },
    });
    const stopped = await first.stack.sandboxes.create({
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
    });
    await first.stack.close();
    await testDocker.getContainer(stopped.id).stop({ t: 0 });

    // The same server (instance and secret) comes back with an empty database.
    const fresh = await createTestDatabase("sqlite");
    const config = { ...first.config, database: { ...first.config.database, url: fresh.url } };
    const second = await openRuntimeStack(config, createLogger({ level: "error" }));
    try {
      const adopted = await second.sandboxes.get(kept.id);
      expect(adopted.status).toMatchObject({ state: "Running", reason: "adopted" });
      expect(adopted.metadata).toEqual({ team: "kept" });
      expect(adopted.image).toEqual({ uri: "paddock/base:bookworm" });
      await expect(second.sandboxes.get(stopped.id)).rejects.toMatchObject({ code: "sandbox_not_found" });
      expect(await containersOf(first.config.server.instance)).toEqual([kept.id]);
      await second.sandboxes.delete(kept.id);
    } finally {
      await second.close();
      await fresh.drop();
      await first.dispose().catch(() => undefined);
    }
  });

  test("settles a pause or resume the engine finished while the server was away, through legal moves", async () => {
    const first = await openTestStack({ secure: "runc" });
    const spec = { image: { uri: "paddock/base:bookworm" }, entrypoint: ["sleep", "infinity"] };
    const pausedByEngine = await first.stack.sandboxes.create(spec);
    const resumedByEngine = await first.stack.sandboxes.create(spec);
    await first.stack.sandboxes.pause(resumedByEngine.id);
    await expect
      .poll(async () => (await first.stack.sandboxes.get(resumedByEngine.id)).status.state, {
        timeout: 30_000,
      })
      .toBe("Paused");
    await first.stack.close();
    // While no server runs, the engine's state moves away from the records.
    await testDocker.getContainer(pausedByEngine.id).pause();
    await testDocker.getContainer(resumedByEngine.id).unpause();

    let second: RuntimeStack | undefined;
    try {
      second = await openRuntimeStack(first.config, createLogger({ level: "error" }));
      const paused = await second.sandboxes.get(pausedByEngine.id);
      const resumed = await second.sandboxes.get(resumedByEngine.id);
      expect([paused.status.state, resumed.status.state]).toEqual(["Paused", "Running"]);
      expect([paused.status.reason, resumed.status.reason]).toEqual(["reconciled", "reconciled"]);
    } finally {
      await second?.close();
      for (const id of [pausedByEngine.id, resumedByEngine.id])
        await testDocker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => undefined);
      await first.dispose().catch(() => undefined);
    }
  });

  test("a server stopped on a sandbox's way to or from disk leaves it asleep on disk, its files kept", async () => {
    const first = await openTestStack({ secure: "runc" });
    const spec = { image: { uri: "paddock/base:bookworm" }, entrypoint: ["sleep", "infinity"] };
    const sandboxes = first.stack.sandboxes;
    const [asleep, goingDown, comingUp] = [
      await sandboxes.create(spec),
      await sandboxes.create(spec),
      await sandboxes.create(spec),
    ];
    const ids = [asleep.id, goingDown.id, comingUp.id];
    const db = first.stack.database.db;
    let second: RuntimeStack | undefined;
    try {
      for (const id of ids) await bashIn(id, "echo kept > /root/kept.txt");
      for (const id of [asleep.id, comingUp.id])
        await sandboxes.pause(id, undefined, { to: "disk", keepMemory: false });
      for (const id of [asleep.id, comingUp.id])
        await expect
          .poll(async () => (await sandboxes.get(id)).status.state, { timeout: 30_000 })
          .toBe("Paused");
      // As a server killed mid-move leaves them: one recorded on its way down with its container
      // already stopped, one recorded on its way up whose container never started.
      await db
        .updateTable("sandboxes")
        .set({ state: "Pausing", paused_to: "disk", memory_preserved: 0 })
        .where("id", "=", goingDown.id)
        .execute();
      await testDocker.getContainer(goingDown.id).stop({ t: 1 });
      await db.updateTable("sandboxes").set({ state: "Resuming" }).where("id", "=", comingUp.id).execute();
      await first.stack.close();

      second = await openRuntimeStack(first.config, createLogger({ level: "error" }));
      for (const id of ids) {
        const sandbox = await second.sandboxes.get(id);
        expect([sandbox.status.state, sandbox.pause]).toEqual([
          "Paused",
          { to: "disk", memoryPreserved: false },
        ]);
      }
      for (const id of ids) {
        expect((await second.sandboxes.wake(id)).status.state).toBe("Running");
        expect((await bashIn(id, "cat /root/kept.txt")).output).toBe("kept\n");
      }
    } finally {
      await second?.close();
      for (const id of ids)
        await testDocker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => undefined);
      await first.dispose().catch(() => undefined);
    }
  });

  test("a sandbox killed for memory while no server watched is Failed for memory, as if one had", async () => {
    const first = await openTestStack({ secure: "runc" });
    const sandbox = await first.stack.sandboxes.create({
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
      resourceLimits: { memory: "256Mi" },
    });
    await first.stack.close();
    // Offered up first, PID 1 is what the kernel kills for memory: the whole container ends.
    await bashIn(sandbox.id, "echo 1000 > /proc/1/oom_score_adj; head -c 1G /dev/zero | tail").catch(
      () => undefined,
    );
    await expect
      .poll(async () => (await testDocker.getContainer(sandbox.id).inspect()).State.Running, {
        timeout: 30_000,
      })
      .toBe(false);

    let second: RuntimeStack | undefined;
    try {
      second = await openRuntimeStack(first.config, createLogger({ level: "error" }));
      const record = await second.sandboxes.get(sandbox.id);
      const failure = await second.sandboxes.exitCause(sandbox.id);
      expect([record.status.state, record.status.reason, failure?.code]).toEqual([
        "Failed",
        "oom_killed",
        "sandbox_oom_killed",
      ]);
    } finally {
      await second?.close();
      await testDocker
        .getContainer(sandbox.id)
        .remove({ force: true })
        .catch(() => undefined);
      await first.dispose().catch(() => undefined);
    }
  });
});
