import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { newId, newSecret } from "@paddock/common";
import { createTestDatabase } from "@paddock/db";
import { Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

// A `paddock serve` process killed with SIGKILL while a sandbox runs: the sandbox's metered time
// survives up to the last checkpoint (0.5 s here), and the time the server was down is not counted.

const root = join(import.meta.dirname, "../..");
const cli = join(root, "packages/cli/dist/main.js");
const checkpointSeconds = 0.5;

/** Starts `paddock serve` and resolves with its URL once it listens. */
async function serve(configFile: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [cli, "serve", "--config", configFile], {
    cwd: root,
    env: { PATH: process.env.PATH },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`paddock serve did not start:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += String(chunk);
      const match = /Paddock is listening on (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => reject(new Error(`paddock serve exited with ${code}:\n${output}`)));
  });
  return { child, url };
}

async function stop(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

describe.each(["sqlite", "postgres"] as const)("metering across a crash on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;
  let configFile: string;
  let running: { child: ChildProcess; url: string } | undefined;
  let token = "";

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    dir = mkdtempSync(join(tmpdir(), "paddock-usage-crash-"));
    configFile = join(dir, "paddock.toml");
    writeFileSync(
      configFile,
      [
        "[server]",
        `data_dir = "${dir}"`,
        "port = 0",
        `api_key = "${newSecret("pdk_")}"`,
        `secret_key = "${newSecret()}"`,
        `instance = "${newId("test")}"`,
        'log_level = "error"',
        "[database]",
        `url = "${database.url}"`,
        "[usage]",
        `checkpoint_interval_seconds = ${checkpointSeconds}`,
        "",
      ].join("\n"),
    );
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
