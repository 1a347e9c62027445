import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { userConnection } from "../support/user.js";

// A warm pool hands out a browser or a desktop with its services already answering: the first
// request after the create, with no retry, reaches the debugger and the display.
describe("warm pools of the browser and desktop templates", () => {
  let t: TestServer;
  let connection: { baseUrl: string; apiKey: string; timeoutSeconds: number };
  const claimed: Sandbox[] = [];

  beforeAll(async () => {
    t = await startTestServer({
      config: {
        secure_runtime: { type: "gvisor" },
        pools: { sizes: { browser: 1, desktop: 1 }, max_total: 2, refill_concurrency: 1 },
      },
    });
    connection = await userConnection(t, "warm");
  });
  afterAll(async () => {
    await t?.server.stack.pools.stop();
    await Promise.all(claimed.map((sandbox) => sandbox.kill().catch(() => undefined)));
    await t?.dispose();
  });

  const claim = async (template: string) => {
    const pools = t.server.stack.pools;
    await expect.poll(() => pools.readyCount(template), { timeout: 120_000, interval: 500 }).toBe(1);
    const sandbox = await Sandbox.create({ ...connection, template });
    claimed.push(sandbox);
    // Served by the pool: its one warm sandbox is gone (a refill takes seconds to become ready).
    expect(await pools.readyCount(template)).toBe(0);
    return sandbox;
  };

  test("a browser from the pool answers DevTools and noVNC at once", async () => {
    const sandbox = await claim("browser");
    const devtools = await sandbox.getEndpoint(9222);
    const version = await fetch(`${devtools.url}json/version`);
    expect(version.status).toBe(200);
    expect(((await version.json()) as { Browser: string }).Browser).toMatch(/^Chrome\//);
    const novnc = await sandbox.getEndpoint(6080);
    expect((await fetch(`${novnc.url}vnc.html`)).status).toBe(200);
  });

  test("a desktop from the pool has its display up at once", async () => {
    const sandbox = await claim("desktop");
    const geometry = await sandbox.commands.run("xdotool getdisplaygeometry");
    expect({ stdout: geometry.stdout, exitCode: geometry.exitCode }).toEqual({
      stdout: "1280 800\n",
      exitCode: 0,
    });
    const novnc = await sandbox.getEndpoint(6080);
    expect((await fetch(`${novnc.url}vnc.html`)).status).toBe(200);
  });
});
