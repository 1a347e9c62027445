import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestDatabase } from "@paddock/db";
import { Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PaddockProcess, serve, stop, writeServerConfig } from "../support/paddock-process.js";

// A `paddock serve` process killed with SIGKILL while a sandbox runs: the sandbox's metered time
// survives up to the last checkpoint (0.5 s here), and the time the server was down is not counted.

const checkpointSeconds = 0.5;

describe.each(["sqlite", "postgres"] as const)("metering across a crash on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;
  let configFile: string;
  let running: PaddockProcess | undefined;
  let token = "";

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    dir = mkdtempSync(join(tmpdir(), "paddock-usage-crash-"));
    configFile = writeServerConfig(dir, database.url, [
      // The restarted server must see the killed one gone (its leases lapsed) to know nobody
      // watched the sandbox meanwhile.
      "lease_seconds = 1",
      "[usage]",
      `checkpoint_interval_seconds = ${checkpointSeconds}`,
    ]).file;
    running = await serve(configFile);
  });
  afterAll(async () => {
    if (running && token) {
      const { items } = await Sandbox.list({ baseUrl: running.url, apiKey: token }).catch(() => ({
        items: [],
      }));
      await Promise.allSettled(
        items.map((item) => Sandbox.kill(item.id, { baseUrl: running?.url, apiKey: token })),
      );
    }
    await stop(running?.child, "SIGTERM");
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a crash loses at most one checkpoint interval, and downtime is not counted", async () => {
    const baseUrl = () => running?.url ?? "";
    await Paddock.signup("crash@example.com", "correct horse battery", { baseUrl: baseUrl() });
    token = (await Paddock.login("crash@example.com", "correct horse battery", { baseUrl: baseUrl() }))
      .session.token;
    const sandbox = await Sandbox.create({
      baseUrl: baseUrl(),
      apiKey: token,
      template: "python",
      timeoutSeconds: 600,
    });
    await sleep(2000);
    const before = (await new Paddock({ baseUrl: baseUrl(), apiKey: token }).usage.get()).usedMinutes;
    expect(before).toBeGreaterThan(1.9 / 60);

    await stop(running?.child, "SIGKILL");
    await sleep(3000); // downtime: the sandbox's container keeps running, unobserved
    const restartedAt = Date.now();
    running = await serve(configFile);
    const client = new Paddock({ baseUrl: baseUrl(), apiKey: token });
    const after = (await client.usage.get()).usedMinutes;
    const sinceRestart = (Date.now() - restartedAt) / 1000;

    // Lost at most one checkpoint interval (plus the answer's rounding).
    expect(after).toBeGreaterThanOrEqual(before - (checkpointSeconds + 0.25) / 60);
    // Counted again only from the new process's start, never the 3 s of downtime.
    expect(after).toBeLessThanOrEqual(before + sinceRestart / 60);
    expect((await Sandbox.connect(sandbox.id, { baseUrl: baseUrl(), apiKey: token })).state).toBe("Running");
    await sleep(1000);
    expect((await client.usage.get()).usedMinutes).toBeGreaterThan(after + 0.9 / 60);
  });
});
