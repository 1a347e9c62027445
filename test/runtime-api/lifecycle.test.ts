import { EXECD_PORT, newSecret, SseParser } from "@paddock/common";
import { buildTestImage, testDocker } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { wsEchoServer } from "./ws-echo-server.js";

const base = { image: { uri: "paddock/base:bookworm" }, entrypoint: ["sleep", "infinity"] };

// Responses are read loosely here: the assertions check their shape.
async function json(response: Response): Promise<any> {
  return response.json();
}

async function waitForState(t: TestServer, id: string, state: string): Promise<void> {
  await expect
    .poll(async () => (await json(await t.api(`/v1/sandboxes/${id}`))).status.state, { timeout: 30_000 })
    .toBe(state);
}

describe.each(["sqlite", "postgres"] as const)("the /v1 lifecycle API on %s", (engine) => {
  let t: TestServer;
  let id: string;

  beforeAll(async () => {
    t = await startTestServer({ engine, config: { server: { diagnostics_inline_limit_bytes: 200 } } });
    const created = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({
        ...base,
        timeout: 600,
        metadata: { project: "apollo", team: "a" },
        extensions: { "storage.id": "x1" },
      }),
    });
    expect(created.status).toBe(202);
    const body = await json(created);
    id = body.id;
    expect(created.headers.get("location")).toBe(`/v1/sandboxes/${id}`);
    expect(body.status.state).toBe("Running");
    expect(body.image).toBeUndefined();
    expect(body.extensions).toEqual({ "storage.id": "x1" });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("details carry the startup source and entrypoint", async () => {
    const details = await json(await t.api(`/v1/sandboxes/${id}`));
    expect(details.image).toEqual({ uri: "paddock/base:bookworm" });
    expect(details.entrypoint).toEqual(["sleep", "infinity"]);
    expect(Date.parse(details.expiresAt)).toBeGreaterThan(Date.now() + 500_000);
  });

  test("lists filter by state and metadata and paginate", async () => {
    const second = await json(
      await t.api("/v1/sandboxes", {
        method: "POST",
        body: JSON.stringify({ ...base, metadata: { project: "zeus" } }),
      }),
    );
    const filter = encodeURIComponent("project=apollo&team=a");
    const byMetadata = await json(await t.api(`/v1/sandboxes?metadata=${filter}`));
    expect(byMetadata.items.map((item: { id: string }) => item.id)).toEqual([id]);
    const byState = await json(await t.api("/v1/sandboxes?state=Running&state=Paused&pageSize=1&page=2"));
    expect(byState.pagination).toEqual({
      page: 2,
      pageSize: 1,
      totalItems: 2,
      totalPages: 2,
      hasNextPage: false,
    });
    expect(byState.items).toHaveLength(1);
    expect((await json(await t.api("/v1/sandboxes?state=Paused"))).items).toHaveLength(0);
    expect((await t.api(`/v1/sandboxes/${second.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await t.api(`/v1/sandboxes/${second.id}`)).status).toBe(404);
  });

  test("metadata is patched as a JSON merge patch", async () => {
    const patch = (body: unknown, type = "application/merge-patch+json") =>
      t.api(`/v1/sandboxes/${id}/metadata`, {
        method: "PATCH",
        body: JSON.stringify(body),
        headers: { "content-type": type },
      });
    expect((await json(await patch({ team: "b", owner: "ops" }))).metadata).toEqual({
      project: "apollo",
      team: "b",
      owner: "ops",
    });
    expect((await json(await patch({ owner: null, missing: null }, "application/json"))).metadata).toEqual({
      project: "apollo",
      team: "b",
    });
    expect((await json(await patch({}))).metadata).toEqual({ project: "apollo", team: "b" });
    const bad = await patch({ "opensandbox.io/reserved": "x" });
    expect(bad.status).toBe(400);
  });

  test("renewal must move the expiry forward", async () => {
    const renew = (expiresAt: string) =>
      t.api(`/v1/sandboxes/${id}/renew-expiration`, { method: "POST", body: JSON.stringify({ expiresAt }) });
    expect((await renew(new Date(Date.now() - 60_000).toISOString())).status).toBe(400);
    expect((await renew(new Date(Date.now() + 60_000).toISOString())).status).toBe(400);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const renewed = await renew(later);
    expect(renewed.status).toBe(200);
    expect(await renewed.json()).toEqual({ expiresAt: later });
    expect((await json(await t.api(`/v1/sandboxes/${id}`))).expiresAt).toBe(later);
  });

  test("pause and resume are asynchronous; pausing twice is a conflict", async () => {
    expect((await t.api(`/v1/sandboxes/${id}/pause`, { method: "POST" })).status).toBe(202);
    await waitForState(t, id, "Paused");
    const again = await t.api(`/v1/sandboxes/${id}/pause`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: "invalid_state" });
    expect((await t.api(`/v1/sandboxes/${id}/resume`, { method: "POST" })).status).toBe(202);
    await waitForState(t, id, "Running");
  });

  test("endpoints resolve with the headers their daemons need, and the proxy carries HTTP", async () => {
    const execd = await json(await t.api(`/v1/sandboxes/${id}/endpoints/${EXECD_PORT}`));
    expect(execd.endpoint).toMatch(/^\d+\.\d+\.\d+\.\d+:44772$/);
    const ping = await fetch(`http://${execd.endpoint}/ping`, { headers: execd.headers });
    expect(ping.status).toBe(200);
    expect((await fetch(`http://${execd.endpoint}/ping`)).status).toBe(401);

    const proxied = await json(
      await t.api(`/v1/sandboxes/${id}/endpoints/${EXECD_PORT}?use_server_proxy=true`),
    );
    expect(proxied.endpoint).toBe(`${t.url.replace("http://", "")}/v1/sandboxes/${id}/proxy/44772`);
    const viaProxy = await t.api(`/v1/sandboxes/${id}/proxy/44772/ping`, { headers: execd.headers });
    expect(viaProxy.status).toBe(200);
    // The proxy needs the API key (or an access token), and keeps it from the sandbox.
    expect((await fetch(`http://${proxied.endpoint}/ping`, { headers: execd.headers })).status).toBe(401);
    const expiring = await json(
      await t.api(
        `/v1/sandboxes/${id}/endpoints/${EXECD_PORT}?expires=${Math.floor(Date.now() / 1000) + 60}`,
      ),
    );
    expect((await fetch(`http://${expiring.endpoint}/ping`, { headers: expiring.headers })).status).toBe(200);
    expect((await t.api(`/v1/sandboxes/${id}/endpoints/44772?expires=1&use_server_proxy=true`)).status).toBe(
      400,
    );
    expect((await t.api(`/v1/sandboxes/${id}/endpoints/0`)).status).toBe(400);
  });

  test("diagnostics come inline when small and as a signed link when large", async () => {
    const events = await json(await t.api(`/v1/sandboxes/${id}/diagnostics/events?scope=lifecycle`));
    expect(events.kind).toBe("events");
    expect(events.delivery).toBe("url");
    expect(events.contentLength).toBeGreaterThan(200);
    const download = await fetch(events.contentUrl);
    expect(download.status).toBe(200);
    expect(await download.text()).toContain("paused in memory");
    expect((await fetch(events.contentUrl.replace(/signature=[^&]+/, "signature=forged"))).status).toBe(403);
    const logs = await json(await t.api(`/v1/sandboxes/${id}/diagnostics/logs?scope=container`));
    expect(logs).toMatchObject({ delivery: "inline", kind: "logs", scope: "container", truncated: false });
    expect((await t.api(`/v1/sandboxes/${id}/diagnostics/logs`)).status).toBe(400);
    expect((await t.api(`/v1/sandboxes/${id}/diagnostics/logs?scope=galaxy`)).status).toBe(400);
  });
});

describe("the /v1 API beyond one sandbox", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("both key headers are accepted and nothing works without a key", async () => {
    expect(
      (await fetch(`${t.url}/v1/sandboxes`, { headers: { "OPEN-SANDBOX-API-KEY": t.apiKey } })).status,
    ).toBe(200);
    expect((await fetch(`${t.url}/v1/sandboxes`, { headers: { "RUNTIME-API-KEY": t.apiKey } })).status).toBe(
      200,
    );
    for (const [method, path] of [
      ["GET", "/v1/sandboxes"],
      ["POST", "/v1/sandboxes"],
      ["GET", "/v1/sandboxes/x"],
      ["DELETE", "/v1/sandboxes/x"],
      ["POST", "/v1/sandboxes/x/pause"],
      ["GET", "/v1/snapshots"],
      ["GET", "/v1/sandboxes/x/endpoints/80"],
      ["GET", "/v1/sandboxes/x/proxy/80/"],
      ["GET", "/v1/sandboxes/x/diagnostics/logs?scope=all"],
    ] as const) {
      const none = await fetch(`${t.url}${path}`, { method });
      expect(none.status, `${method} ${path}`).toBe(401);
      const wrong = await fetch(`${t.url}${path}`, { method, headers: { "RUNTIME-API-KEY": newSecret() } });
      expect(wrong.status, `${method} ${path}`).toBe(401);
    }
  });

  test("NODE_* variables from the caller or the image reach commands, never execd's own Node", async () => {
    const image = "paddock-test/node-options:latest";
    await buildTestImage(
      image,
      `FROM ${base.image.uri}\nENV NODE_OPTIONS="--require /from/the/image.js" NODE_ENV=staging\n`,
    );
    const echo = 'echo "$NODE_OPTIONS|$NODE_ENV|${PADDOCK_STASHED_NODE_OPTIONS-none}"';
    const output = async (sandboxId: string) => {
      const { host, port } = await t.server.stack.sandboxes.target(sandboxId, EXECD_PORT);
      const response = await fetch(`http://${host}:${port}/command`, {
        method: "POST",
        headers: {
          "X-EXECD-ACCESS-TOKEN": t.server.stack.sandboxes.tokens(sandboxId).execd,
          "content-type": "application/json",
        },
        body: JSON.stringify({ command: echo }),
      });
      // One stdout event per line, without its newline (OpenSandbox's framing).
      const parser = new SseParser();
      const events = parser.push(await response.text()).concat(parser.end());
      return events.find((event) => event.type === "stdout")?.text;
    };
    try {
      // Either --require would stop a Node that read it; execd starts and its commands see them.
      const fromCaller = await t.api("/v1/sandboxes", {
        method: "POST",
        body: JSON.stringify({ ...base, env: { NODE_OPTIONS: "--require /nowhere.js" } }),
      });
      expect(fromCaller.status).toBe(202);
      const callers = await json(fromCaller);
      expect(await output(callers.id)).toBe("--require /nowhere.js||none");
      const fromImage = await json(
        await t.api("/v1/sandboxes", {
          method: "POST",
          body: JSON.stringify({ ...base, image: { uri: image } }),
        }),
      );
      expect(fromImage.status.state).toBe("Running");
      expect(await output(fromImage.id)).toBe("--require /from/the/image.js|staging|none");
      for (const sandbox of [callers.id, fromImage.id])
        expect((await t.api(`/v1/sandboxes/${sandbox}`, { method: "DELETE" })).status).toBe(204);
    } finally {
      await testDocker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
    }
  });

  test("snapshots: create from a running sandbox, restore, list, delete", async () => {
    const source = await json(await t.api("/v1/sandboxes", { method: "POST", body: JSON.stringify(base) }));
    const { host, port } = await t.server.stack.sandboxes.target(source.id, EXECD_PORT);
    const headers = {
      "X-EXECD-ACCESS-TOKEN": t.server.stack.sandboxes.tokens(source.id).execd,
      "content-type": "application/json",
    };
    await (
      await fetch(`http://${host}:${port}/command`, {
        method: "POST",
        headers,
        body: JSON.stringify({ command: "echo saved > /root/marker" }),
      })
    ).text();
    const accepted = await t.api(`/v1/sandboxes/${source.id}/snapshots`, {
      method: "POST",
      body: JSON.stringify({ name: "checkpoint" }),
    });
    expect(accepted.status).toBe(202);
    const snapshot = await json(accepted);
    expect(snapshot.status.state).toBe("Creating");
    expect((await t.api(`/v1/snapshots/${snapshot.id}`, { method: "DELETE" })).status).toBe(409);
    await expect
      .poll(async () => (await json(await t.api(`/v1/snapshots/${snapshot.id}`))).status.state, {
        timeout: 60_000,
      })
      .toBe("Ready");
    const listed = await json(
      await t.api(`/v1/snapshots?sandboxId=${source.id}&name=checkpoint&state=Ready`),
    );
    expect(listed.items.map((item: { id: string }) => item.id)).toEqual([snapshot.id]);
    expect((await json(await t.api("/v1/snapshots?name=other"))).items).toHaveLength(0);

    const restored = await json(
      await t.api("/v1/sandboxes", { method: "POST", body: JSON.stringify({ snapshotId: snapshot.id }) }),
    );
    const details = await json(await t.api(`/v1/sandboxes/${restored.id}`));
    expect(details.snapshotId).toBe(snapshot.id);
    expect(details.image).toBeUndefined();
    const target = await t.server.stack.sandboxes.target(restored.id, EXECD_PORT);
    const output = await (
      await fetch(`http://${target.host}:${target.port}/command`, {
        method: "POST",
        headers: { ...headers, "X-EXECD-ACCESS-TOKEN": t.server.stack.sandboxes.tokens(restored.id).execd },
        body: JSON.stringify({ command: "cat /root/marker" }),
      })
    ).text();
    expect(output).toContain("saved");
    for (const sandbox of [restored.id, source.id])
      expect((await t.api(`/v1/sandboxes/${sandbox}`, { method: "DELETE" })).status).toBe(204);
    expect((await t.api(`/v1/snapshots/${snapshot.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await t.api(`/v1/snapshots/${snapshot.id}`)).status).toBe(404);
  });

  test("the proxy carries WebSockets; secureAccess endpoints work with their token alone", async () => {
    const sandbox = await json(
      await t.api("/v1/sandboxes", {
        method: "POST",
        body: JSON.stringify({
          image: { uri: "paddock/template-node:latest" },
          entrypoint: ["node", "-e", wsEchoServer],
          secureAccess: true,
        }),
      }),
    );
    const endpoint = await json(await t.api(`/v1/sandboxes/${sandbox.id}/endpoints/8080`));
    expect(endpoint.endpoint).toContain(`/v1/sandboxes/${sandbox.id}/proxy/8080`);
    expect(Object.keys(endpoint.headers)).toEqual(["X-Paddock-Access-Token"]);
    await expect
      .poll(async () => (await fetch(`http://${endpoint.endpoint}/`, { headers: endpoint.headers })).status, {
        timeout: 20_000,
      })
      .toBe(200);
    expect(await (await fetch(`http://${endpoint.endpoint}/`, { headers: endpoint.headers })).text()).toBe(
      "plain http ok",
    );
    expect(
      (await fetch(`http://${endpoint.endpoint}/`, { headers: { "X-Paddock-Access-Token": "forged" } }))
        .status,
    ).toBe(401);

    // The sandbox learns the host and scheme the client asked for, as behind any reverse proxy.
    const seen = await (
      await fetch(`http://${endpoint.endpoint}/headers`, { headers: endpoint.headers })
    ).json();
    expect(seen).toMatchObject({
      host: expect.stringMatching(/^10\.\d+\.\d+\.\d+:8080$/),
      "x-forwarded-host": new URL(t.url).host,
      "x-forwarded-proto": "http",
    });
    expect(seen).not.toHaveProperty("x-paddock-access-token");

    // A browser's upgrade carries its page's Origin, which the sandbox checks against that host.
    const socket = new WebSocket(`ws://${endpoint.endpoint}/socket`, {
      headers: endpoint.headers,
      origin: t.url,
    });
    const reply = await new Promise<string>((resolve, reject) => {
      socket.on("open", () => socket.send("hello"));
      socket.on("message", (data) => resolve(data.toString()));
      socket.on("error", reject);
    });
    socket.close();
    expect(reply).toBe("echo: hello");
    const refused = new WebSocket(`ws://${endpoint.endpoint}/socket`);
    const status = await new Promise<number>((resolve) =>
      refused.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(401);
  });

  test("a WebSocket open through the proxy keeps an idle sandbox awake, silent or not; closed, it idles out", async () => {
    const sandbox = await json(
      await t.api("/v1/sandboxes", {
        method: "POST",
        body: JSON.stringify({
          image: { uri: "paddock/template-node:latest" },
          entrypoint: ["node", "-e", wsEchoServer],
          timeout: 600,
          extensions: { "paddock.lifecycle.idleTimeout": "2" },
        }),
      }),
    );
    const endpoint = await json(await t.api(`/v1/sandboxes/${sandbox.id}/endpoints/8080`));
    await expect
      .poll(async () => (await fetch(`http://${endpoint.endpoint}/`, { headers: endpoint.headers })).status, {
        timeout: 20_000,
      })
      .toBe(200);
    const socket = new WebSocket(`ws://${endpoint.endpoint}/socket`, { headers: endpoint.headers });
    await new Promise((resolve, reject) => {
      socket.on("open", resolve);
      socket.on("error", reject);
    });
    const state = async () => (await json(await t.api(`/v1/sandboxes/${sandbox.id}`))).status.state;
    // Three idle timeouts with nothing said on the socket.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    expect(await state()).toBe("Running");
    socket.close();
    await expect.poll(state, { timeout: 30_000, interval: 200 }).toBe("Paused");
    expect((await t.api(`/v1/sandboxes/${sandbox.id}`, { method: "DELETE" })).status).toBe(204);
  });
});
