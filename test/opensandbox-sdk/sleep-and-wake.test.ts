/**
 * Sandboxes that sleep and wake through `/v1` (decisions 0110 and 0190): the lifecycle policy as
 * `paddock.lifecycle.*` extensions, resume on use through the published OpenSandbox SDK and plain
 * HTTP, OpenSandbox's renew-on-access, and the refusals of bad extension values.
 */
import { ConnectionConfig, Sandbox, SandboxApiException, SandboxManager } from "@alibaba-group/opensandbox";
import { EXECD_PORT } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const image = { uri: "paddock/base:bookworm" };
const entrypoint = ["sleep", "infinity"];

// Responses are read loosely here: the assertions check their shape.
async function json(response: Response): Promise<any> {
  return response.json();
}

describe.each(["gvisor", "runc"] as const)("sleep and wake through /v1 under %s", (runtime) => {
  let t: TestServer;
  let connectionConfig: ConnectionConfig;
  const created: string[] = [];

  beforeAll(async () => {
    t = await startTestServer({
      config: {
        secure_runtime: { type: runtime === "runc" ? "" : "gvisor" },
        // A sandbox paused in memory this long moves to disk (the pause route has no body to ask).
        runtime: { disk_pause_after_seconds: 4 },
      },
    });
    connectionConfig = new ConnectionConfig({ domain: t.url, apiKey: t.apiKey, requestTimeoutSeconds: 60 });
  });
  afterAll(async () => {
    const manager = SandboxManager.create({ connectionConfig });
    for (const id of created) await manager.killSandbox(id).catch(() => undefined);
    await t?.dispose();
  });

  async function create(options: Partial<Parameters<typeof Sandbox.create>[0]>): Promise<Sandbox> {
    const sandbox = await Sandbox.create({
      connectionConfig,
      image,
      entrypoint,
      timeoutSeconds: 600,
      ...options,
    });
    created.push(sandbox.id);
    return sandbox;
  }
  const info = async (id: string) => json(await t.api(`/v1/sandboxes/${id}`));
  const statusOf = (id: string) =>
    expect.poll(async () => (await info(id)).status, { timeout: 60_000, interval: 100 });

  test("idle for its idleTimeout, a sandbox pauses in memory; a command through the SDK wakes it and is served", async () => {
    const extensions = { "paddock.lifecycle.idleTimeout": "2", "storage.id": "x1" };
    const sandbox = await create({ extensions });
    await sandbox.commands.run("echo before > /root/kept.txt");
    // Shown as given; the execd endpoint goes through the server, which sees each call and wakes it.
    expect((await sandbox.getInfo()).extensions).toEqual(extensions);
    const endpoint = await json(await t.api(`/v1/sandboxes/${sandbox.id}/endpoints/${EXECD_PORT}`));
    expect(endpoint.endpoint).toContain(`/v1/sandboxes/${sandbox.id}/proxy/${EXECD_PORT}`);

    await statusOf(sandbox.id).toMatchObject({
      state: "Paused",
      message: "paused in memory, resumes where it stopped",
    });
    const woken = await sandbox.commands.run("cat /root/kept.txt; echo awake");
    expect(woken.logs.stdout.map((line) => line.text)).toEqual(["before", "awake"]);
    expect((await sandbox.getInfo()).status.state).toBe("Running");
  });

  test("onTimeout pause: at its timeout it pauses, moves to disk later, and a command resumes it with its timeout again", async () => {
    const sandbox = await create({
      timeoutSeconds: 6,
      extensions: { "paddock.lifecycle.onTimeout": "pause" },
    });
    await sandbox.commands.run("echo on-disk > /root/kept.txt");
    // Paused at the timeout (the expiry is spent), then to disk after disk_pause_after_seconds:
    // under runc with its memory (CRIU, decision 0196), under gVisor here with its files only.
    await statusOf(sandbox.id).toMatchObject({
      state: "Paused",
      message:
        runtime === "runc"
          ? "paused to disk, processes and memory kept"
          : "paused to disk, processes restart on resume (files kept)",
    });
    expect((await info(sandbox.id)).expiresAt).toBeUndefined();

    const woken = await sandbox.commands.run("cat /root/kept.txt");
    expect(woken.logs.stdout.map((line) => line.text)).toEqual(["on-disk"]);
    const after = await info(sandbox.id);
    expect(after.status.state).toBe("Running");
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.now());
  });

  test("with autoResume false a paused sandbox is not woken: a call through its endpoint is 409", async () => {
    const response = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({
        image,
        entrypoint,
        timeout: 600,
        extensions: { "paddock.lifecycle.idleTimeout": "1", "paddock.lifecycle.autoResume": "false" },
      }),
    });
    expect(response.status).toBe(202);
    const { id } = await json(response);
    created.push(id);
    await statusOf(id).toMatchObject({ state: "Paused" });
    const endpoint = await json(await t.api(`/v1/sandboxes/${id}/endpoints/${EXECD_PORT}`));
    // The endpoint and its headers suffice (an access token stands in for the API key).
    const ping = await fetch(`http://${endpoint.endpoint}/ping`, { headers: endpoint.headers });
    expect(ping.status).toBe(409);
    expect((await info(id)).status.state).toBe("Paused");

    await t.api(`/v1/sandboxes/${id}/resume`, { method: "POST" });
    await statusOf(id).toMatchObject({ state: "Running" });
    const served = await fetch(`http://${endpoint.endpoint}/ping`, { headers: endpoint.headers });
    expect(served.status).toBe(200);
  });
});

describe("the lifecycle extensions of /v1", () => {
  let t: TestServer;
  let connectionConfig: ConnectionConfig;

  beforeAll(async () => {
    t = await startTestServer();
    connectionConfig = new ConnectionConfig({ domain: t.url, apiKey: t.apiKey, requestTimeoutSeconds: 60 });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const createWith = (extensions: Record<string, string>, timeout = 600) =>
    t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({ image, entrypoint, timeout, extensions }),
    });

  test.each([
    [
      { "paddock.lifecycle.idleTimeout": "0" },
      'body.extensions["paddock.lifecycle.idleTimeout"]: must be a whole number of seconds from 1 to 315360000, or "never"; got "0"',
    ],
    [
      { "paddock.lifecycle.maxPaused": "1.5" },
      'body.extensions["paddock.lifecycle.maxPaused"]: must be a whole number of seconds from 1 to 315360000, or "never"; got "1.5"',
    ],
    [
      { "paddock.lifecycle.onTimeout": "sleep" },
      'body.extensions["paddock.lifecycle.onTimeout"]: must be one of "kill", "pause"',
    ],
    [
      { "paddock.lifecycle.autoResume": "yes" },
      'body.extensions["paddock.lifecycle.autoResume"]: must be one of "true", "false"',
    ],
    [
      { "paddock.lifecycle.idleTimout": "60" },
      'body.extensions["paddock.lifecycle.idleTimout"]: unknown property "paddock.lifecycle.idleTimout"; did you mean "paddock.lifecycle.idleTimeout"?',
    ],
    [{ "paddock.sleep": "yes" }, 'body.extensions["paddock.sleep"]: unknown property "paddock.sleep"'],
    // Within the parser's bound, past the operator's longest timeout (a week by default).
    [
      { "paddock.lifecycle.idleTimeout": "9999999" },
      'body.extensions["paddock.lifecycle.idleTimeout"]: must be a whole number of seconds from 1 to 604800, or "never"',
    ],
    [
      { "access.renew.extend.seconds": "299" },
      'body.extensions["access.renew.extend.seconds"]: must be a whole number of seconds from 300 to 86400; got "299"',
    ],
    [
      { "access.renew.extend.seconds": "86401" },
      'body.extensions["access.renew.extend.seconds"]: must be a whole number of seconds from 300 to 86400; got "86401"',
    ],
    [
      { "access.renew.extend.seconds": "5m" },
      'body.extensions["access.renew.extend.seconds"]: must be a whole number of seconds from 300 to 86400; got "5m"',
    ],
  ])("%j is refused with 400 naming the key", async (extensions, message) => {
    const response = await createWith(extensions);
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({ code: "invalid_request", message });
  });

  test("the SDK sees the refusal as a 400 with the message", async () => {
    const refused = await Sandbox.create({
      connectionConfig,
      image,
      entrypoint,
      extensions: { "paddock.lifecycle.keepMemory": "maybe" },
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SandboxApiException);
    expect(refused).toMatchObject({
      statusCode: 400,
      message: 'body.extensions["paddock.lifecycle.keepMemory"]: must be one of "true", "false"',
    });
  });

  test("a sandbox without lifecycle extensions keeps its direct endpoint, and its expiry on access", async () => {
    const created = await json(await createWith({ "storage.id": "x1" }, 120));
    try {
      expect(created.extensions).toEqual({ "storage.id": "x1" });
      const endpoint = await json(await t.api(`/v1/sandboxes/${created.id}/endpoints/${EXECD_PORT}`));
      expect(endpoint.endpoint).not.toContain("/proxy/");
      // Through the proxy when asked; without access.renew.extend.seconds its expiry stays.
      const proxied = await json(
        await t.api(`/v1/sandboxes/${created.id}/endpoints/${EXECD_PORT}?use_server_proxy=true`),
      );
      const ping = await fetch(`http://${proxied.endpoint}/ping`, {
        headers: { ...proxied.headers, "RUNTIME-API-KEY": t.apiKey },
      });
      expect(ping.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await json(await t.api(`/v1/sandboxes/${created.id}`))).expiresAt).toBe(created.expiresAt);
    } finally {
      await t.api(`/v1/sandboxes/${created.id}`, { method: "DELETE" });
    }
  });

  test("renew-on-access: each request through its endpoint moves the expiry to now plus the extension", async () => {
    const created = await json(await createWith({ "access.renew.extend.seconds": "600" }, 120));
    try {
      expect(Date.parse(created.expiresAt)).toBeLessThan(Date.now() + 130_000);
      const endpoint = await json(await t.api(`/v1/sandboxes/${created.id}/endpoints/${EXECD_PORT}`));
      expect(endpoint.endpoint).toContain("/proxy/");
      const startedAt = Date.now();
      const ping = await fetch(`http://${endpoint.endpoint}/ping`, { headers: endpoint.headers });
      expect(ping.status).toBe(200);
      await expect
        .poll(async () => Date.parse((await json(await t.api(`/v1/sandboxes/${created.id}`))).expiresAt), {
          timeout: 10_000,
        })
        .toBeGreaterThanOrEqual(startedAt + 600_000);
    } finally {
      await t.api(`/v1/sandboxes/${created.id}`, { method: "DELETE" });
    }
  });
});
