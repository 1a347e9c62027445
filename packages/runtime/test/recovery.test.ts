import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, newId, newSecret } from "@paddock/common";
import { createTestDatabase } from "@paddock/db";
import { afterAll, describe, expect, test } from "vitest";
import { openRuntimeStack, type RuntimeStack } from "../src/stack.js";
import { openTestStack, testDocker } from "../src/testing/index.js";

const fixture = join(import.meta.dirname, "fixtures/create-storm.ts");

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

  test("comes back with every sandbox Running and listed or gone, nothing orphaned, renewals kept", async () => {
    const instance = newId("crash");
    const overrides = {
      server: { data_dir: mkdtempSync(join(tmpdir(), "paddock-crash-")), secret_key: newSecret(), instance },
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
    // Let the creates get part of the way: rows written, containers being made.
    await new Promise((resolve) => setTimeout(resolve, 400));
    child.kill("SIGKILL");
    await once(child, "exit");
    const [, renewedId, renewedExpiry] = /renewed (\S+) (\S+)/.exec(output) ?? [];

    // The kill really caught creates half-way: rows still Pending.
    const before = await (await database).open();
    const pending = await before.db
      .selectFrom("sandboxes")
      .select("id")
      .where("state", "=", "Pending")
      .execute();
    await before.close();
    expect(pending.length).toBeGreaterThan(0);

    stack = await openRuntimeStack(loadConfig({ env: {}, overrides }), createLogger({ level: "warn" }));
    const { items } = await stack.sandboxes.list({ pageSize: 1000 });
    for (const sandbox of items) expect(sandbox.status.state, sandbox.id).toBe("Running");
    expect(items.map((sandbox) => sandbox.id)).toContain(renewedId);
    expect(items.find((sandbox) => sandbox.id === renewedId)?.expiresAt).toBe(renewedExpiry);
    // Every container of this server is a listed sandbox, and every listed sandbox has its container.
    expect(await containersOf(instance)).toEqual(items.map((sandbox) => sandbox.id).sort());
    // And each answers through execd.
    for (const sandbox of items) {
      const target = await stack.sandboxes.target(sandbox.id, 44772);
      const response = await fetch(`http://${target.host}:${target.port}/ping`, {
        headers: { "X-EXECD-ACCESS-TOKEN": stack.sandboxes.tokens(sandbox.id).execd },
      });
      expect(response.status).toBe(200);
    }
  });
});

describe("the reconciler", () => {
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
    const config = { ...first.config, database: { url: fresh.url } };
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
});
