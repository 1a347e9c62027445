import { execFileSync, spawn } from "node:child_process";
import { openSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { testDocker } from "@paddock/runtime/testing";
import { Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { eventually, settles } from "./checks.js";
import { FaultServer } from "./fault-server.js";

// Fault 2 (docs/reliability.md): the Docker engine restarted under running and paused sandboxes,
// the way scripts/setup.sh runs it. The engine stops its containers as it goes (no live-restore),
// so they cannot survive; what is checked is that each ends Failed, nothing is left behind, and
// the server goes on: it creates again and sees containers end again without a restart.
// It takes the machine's engine down: run it alone, as `make test-slow` runs each slow file.

async function restartDockerd(): Promise<void> {
  const pid = Number(execFileSync("pidof", ["dockerd"], { encoding: "utf8" }).trim());
  process.kill(pid, "SIGTERM");
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
    try {
      process.kill(pid, 0);
    } catch {
      break;
    }
  }
  const log = openSync("/var/log/paddock-dockerd.log", "a");
  spawn("setsid", ["nohup", "dockerd"], { detached: true, stdio: ["ignore", log, log] }).unref();
  await eventually(async () => (await testDocker.info()) as unknown, 120_000, "the engine answers again");
}

describe("the Docker engine restarted under running sandboxes", () => {
  let server: FaultServer;
  const connection = () => server.connection();

  beforeAll(async () => {
    server = await FaultServer.start({
      name: "dockerd",
      email: "dockerd@example.com",
      config: [
        // A reconciliation pass comes only every lease: long here, so what the test sees after the
        // restart is the engine's events, not a pass that would hide their loss.
        "lease_seconds = 60",
        "[usage]",
        "checkpoint_interval_seconds = 0.5",
      ],
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  test("every sandbox ends Failed with nothing left behind, and the server serves and watches again", async () => {
    const policy = {
      defaultAction: "deny" as const,
      egress: [{ action: "allow" as const, target: "allowed.test" }],
    };
    const sandboxes = await Promise.all([
      Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900 }),
      Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900, networkPolicy: policy }),
      Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900 }),
    ]);
    await sandboxes[2]?.pause();
    const ids = sandboxes.map((sandbox) => sandbox.id);

    const downAt = Date.now();
    await restartDockerd();
    console.log(`dockerd restarted in ${Date.now() - downAt} ms`);
    expect(server.running?.child.exitCode, "the server lives on").toBeNull();

    // Each sandbox rests Failed (its container ended with the engine), its meter stopped.
    for (const sandbox of sandboxes)
      await eventually(
        async () => (await sandbox.refresh()).state === "Failed",
        60_000,
        `${sandbox.id} Failed`,
      );
    await settles(server.db, server.instance, ids);
    for (const sandbox of sandboxes) await sandbox.kill();

    // Creates work again, and the server still hears the engine: a container that dies now is
    // Failed within seconds, not at the next reconciliation a lease later.
    const next = await Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900 });
    expect((await next.commands.run("echo next")).stdout).toBe("next\n");
    const [container] = await testDocker.listContainers({
      filters: { label: [`paddock.sandbox=${next.id}`, "paddock.role=sandbox"] },
    });
    await testDocker.getContainer(container?.Id ?? "").kill();
    await eventually(async () => (await next.refresh()).state === "Failed", 20_000, "a later exit seen");
    await next.kill();
    await settles(server.db, server.instance, [...ids, next.id]);
  }, 600_000);
});
