import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXECD_OUTPUT_FRAMING_HEADER, EXECD_PORT, EXECD_TOKEN_HEADER, SseParser } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { bashIn, openTestStack, type TestStack, testDocker, testImage } from "../src/testing/index.js";

/** Runs a command through the sandbox's execd and returns its stdout, byte for byte (chunk framing). */
async function execdRun(t: TestStack, id: string, command: string): Promise<string> {
  const { host } = await t.stack.sandboxes.target(id, EXECD_PORT);
  const response = await fetch(`http://${host}:${EXECD_PORT}/command`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      [EXECD_TOKEN_HEADER]: t.stack.sandboxes.tokens(id).execd,
      [EXECD_OUTPUT_FRAMING_HEADER]: "chunks",
    },
    body: JSON.stringify({ command }),
  });
  const parser = new SseParser();
  const events = parser.push(await response.text()).concat(parser.end());
  return events
    .filter((event) => event.type === "stdout")
    .map((event) => String(event.text ?? ""))
    .join("");
}

describe("warm pools", () => {
  let t: TestStack;
  const templatesDir = mkdtempSync(join(tmpdir(), "paddock-templates-"));
  mkdirSync(join(templatesDir, "warm"));
  writeFileSync(
    join(templatesDir, "warm", "template.toml"),
    `id = "warm"\nname = "Warm"\ndescription = "pool test"\nimage = "${testImage}"\n[resources]\ncpu = "500m"\nmemory = "256Mi"\n`,
  );

  beforeAll(async () => {
    t = await openTestStack({
      secure: "gvisor",
      config: {
        templates: { dir: templatesDir },
        pools: { sizes: { warm: 2 }, max_total: 4, refill_concurrency: 2 },
      },
    });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("fill up in the background and stay out of listings", async () => {
    await expect.poll(() => t.stack.pools.readyCount("warm"), { timeout: 60_000 }).toBe(2);
    expect((await t.stack.sandboxes.list({})).items).toHaveLength(0);
  });

  test("a claim is a clean sandbox with the caller's env, metadata and expiry counted from the claim", async () => {
    await expect.poll(() => t.stack.pools.readyCount("warm"), { timeout: 60_000 }).toBe(2);
    const before = Date.now();
    const sandbox = await t.stack.sandboxes.create({
      template: "warm",
      owner: "acct-1",
      env: { GREETING: "hello-from-claim" },
      metadata: { team: "pool" },
      timeout: 120,
    });
    expect(sandbox.status.state).toBe("Running");
    expect(sandbox.owner).toBe("acct-1");
    expect(sandbox.metadata).toEqual({ team: "pool" });
    expect(sandbox.pooledFor).toBeUndefined();
    expect(Date.parse(sandbox.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(sandbox.expiresAt ?? "")).toBeGreaterThanOrEqual(before + 119_000);
    expect(await execdRun(t, sandbox.id, "echo $GREETING")).toBe("hello-from-claim\n");
    expect((await bashIn(sandbox.id, "hostname")).output.trim()).toBe(sandbox.id.slice(0, 63));
    // Nothing ran in it before the claim: /tmp is as empty as in the image.
    expect((await bashIn(sandbox.id, "ls -A /tmp | wc -l")).output).toBe("0\n");
    expect((await t.stack.sandboxes.list({ owner: "acct-1" })).items.map((s) => s.id)).toEqual([sandbox.id]);
    // The pool refills behind the claim.
    await expect.poll(() => t.stack.pools.readyCount("warm"), { timeout: 60_000 }).toBe(2);
  });

  test("a claimed sandbox takes the caller's lifecycle and extensions, not the warm sandbox's", async () => {
    await expect.poll(() => t.stack.pools.readyCount("warm"), { timeout: 60_000 }).toBe(2);
    const before = Date.now();
    const sandbox = await t.stack.sandboxes.create({
      template: "warm",
      timeout: 120,
      lifecycle: { idleTimeout: 300, onTimeout: "pause", autoResume: false },
      extensions: { "storage.id": "x1" },
    });
    // Served by the pool: its container was there before the create.
    expect(Date.parse((await testDocker.getContainer(sandbox.id).inspect()).Created)).toBeLessThan(before);
    expect(sandbox.lifecycle).toMatchObject({
      idleTimeout: 300,
      onTimeout: "pause",
      autoResume: false,
      timeout: 120,
    });
    expect(sandbox.extensions).toEqual({ "storage.id": "x1" });
    expect(Date.parse(sandbox.idleAt ?? "")).toBeGreaterThanOrEqual(before + 299_000);
  });

  test("a create the pool could serve passes the same checks as a cold one", async () => {
    await expect.poll(() => t.stack.pools.readyCount("warm"), { timeout: 60_000 }).toBe(2);
    const before = (await t.stack.sandboxes.list({})).items.map((sandbox) => sandbox.id);
    const max = t.config.server.max_sandbox_timeout_seconds;
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ timeout: max + 1 }, "invalid_request"],
      [{ timeout: 1.5 }, "invalid_request"],
      [{ metadata: { "paddock.io/pool": "mine" } }, "invalid_request"],
      [{ metadata: { "opensandbox.io/x": "y" } }, "invalid_request"],
      [{ metadata: { team: "not a label value!" } }, "invalid_request"],
    ];
    for (const [extra, code] of refusals) {
      await expect(
        t.stack.sandboxes.create({ template: "warm", ...extra }),
        JSON.stringify(extra),
      ).rejects.toMatchObject({ code });
    }
    // Nothing was claimed: both warm sandboxes are still there.
    expect(await t.stack.pools.readyCount("warm")).toBe(2);
    expect((await t.stack.sandboxes.list({})).items.map((sandbox) => sandbox.id)).toEqual(before);
  });

  test("an empty pool falls back to a cold create; other requests never use the pool", async () => {
    await expect.poll(() => t.stack.pools.readyCount("warm"), { timeout: 60_000 }).toBe(2);
    const claims = await Promise.all([1, 2, 3].map(() => t.stack.sandboxes.create({ template: "warm" })));
    expect(claims.every((sandbox) => sandbox.status.state === "Running")).toBe(true);
    expect(new Set(claims.map((sandbox) => sandbox.id)).size).toBe(3);
    // A request with its own limits is not what the pool holds: it is created cold.
    const custom = await t.stack.sandboxes.create({
      template: "warm",
      image: { uri: testImage },
      entrypoint: ["sleep", "infinity"],
      resourceLimits: { memory: "128Mi" },
    });
    expect(custom.resourceLimits).toEqual({ memory: "128Mi" });
  });
});
