import { Writable } from "node:stream";
import { createLogger, SseParser } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { wsEchoServer } from "../../../test/runtime-api/ws-echo-server.js";
import { type ControlPlaneUnderTest, startControlPlane } from "./harness.js";

// One sandbox (the node template) serves every test here: commands, raw files, code errors and
// public endpoints over HTTP and WebSocket, with a second account that must see none of it.
describe("a sandbox through the control plane", () => {
  const logLines: string[] = [];
  let cp: ControlPlaneUnderTest;
  let owner: string;
  let stranger: string;
  let id: string;

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    cp = await startControlPlane({ logger: createLogger({ level: "info", name: "audit", destination }) });
    owner = await cp.account("owner@example.com");
    stranger = await cp.account("stranger@example.com");
    const created = await cp.call("POST", "/sandboxes", owner, { template: "node", timeout: 900 });
    expect(created.status).toBe(201);
    id = created.body.id;
  });
  afterAll(async () => {
    await cp?.dispose();
  });

  test("run with cwd, env and a timeout; stream ends right after its terminal event", async () => {
    const ran = await cp.call("POST", `/sandboxes/${id}/run`, owner, {
      command: "pwd; echo $WHO; node -e 'process.exit(3)'",
      cwd: "/tmp",
      env: { WHO: "me" },
    });
    expect(ran.body).toEqual({ stdout: "/tmp\nme\n", stderr: "", exitCode: 3 });
    const slow = await cp.call("POST", `/sandboxes/${id}/run`, owner, {
      command: "sleep 30",
      timeoutMs: 500,
    });
    expect(slow.status).toBe(200);
    expect(slow.body.exitCode).not.toBe(0);

    // A buffered answer keeps 8 MiB of a stream and says it dropped the rest.
    const flood = await cp.call("POST", `/sandboxes/${id}/run`, owner, {
      command: "head -c 9000000 /dev/zero | tr '\\0' a; echo done >&2",
    });
    expect(flood.body).toMatchObject({ stderr: "done\n", exitCode: 0, truncated: true });
    expect(flood.body.stdout).toHaveLength(8 * 2 ** 20);

    const stream = await fetch(`${cp.url}/sandboxes/${id}/run/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "echo out; echo err >&2" }),
    });
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const parser = new SseParser();
    const events = parser.push(await stream.text()).concat(parser.end());
    expect(events[0]?.type).toBe("init");
    expect(events.at(-1)?.type).toBe("execution_complete");
    expect(events.filter((event) => event.type === "stderr").map((event) => event.text)).toEqual(["err\n"]);
  });

  test("files: raw bytes in through /files/write and out through /files/read, ranges included", async () => {
    const bytes = Buffer.alloc(3 * 2 ** 20 + 17, 0);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) % 256;
    const written = await fetch(`${cp.url}/sandboxes/${id}/files/write?path=/tmp/raw.bin&mode=600`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/octet-stream" },
      body: bytes,
    });
    expect(await written.json()).toEqual({ path: "/tmp/raw.bin", size: bytes.length });
    const read = await fetch(`${cp.url}/sandboxes/${id}/files/read`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${owner}`,
        "content-type": "application/json",
        accept: "application/octet-stream",
      },
      body: JSON.stringify({ path: "/tmp/raw.bin" }),
    });
    expect(read.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.from(await read.arrayBuffer()).equals(bytes)).toBe(true);
    const ranged = await fetch(`${cp.url}/sandboxes/${id}/files/read`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${owner}`,
        "content-type": "application/json",
        accept: "application/octet-stream",
        range: "bytes=100-109",
      },
      body: JSON.stringify({ path: "/tmp/raw.bin" }),
    });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(bytes.subarray(100, 110));
    const listed = await cp.call("GET", `/sandboxes/${id}/files/list?path=/tmp`, owner);
    expect(listed.body.items).toContainEqual(
      expect.objectContaining({ path: "/tmp/raw.bin", size: bytes.length, mode: 600 }),
    );

    const noPath = await fetch(`${cp.url}/sandboxes/${id}/files/write`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/octet-stream" },
      body: "x",
    });
    expect([noPath.status, ((await noPath.json()) as { code: string }).code]).toEqual([
      400,
      "invalid_request",
    ]);
    // JSON writes still validate their body.
    expect((await cp.call("POST", `/sandboxes/${id}/files/write`, owner, { path: "/tmp/x" })).status).toBe(
      400,
    );
    expect(
      (
        await cp.call("POST", `/sandboxes/${id}/files/read`, owner, {
          path: "/tmp/raw.bin",
          encoding: "base64",
        })
      ).body.size,
    ).toBe(bytes.length);
  });

  test("code: an unknown language is a 400 with a registry code, not an ad-hoc body", async () => {
    const refused = await cp.call("POST", `/sandboxes/${id}/code/contexts`, owner, { language: "cobol" });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(refused.body).toEqual({ code: expect.stringMatching(/^[a-z_]+$/), detail: expect.any(String) });
    const context = await cp.call("POST", `/sandboxes/${id}/code/contexts`, owner, {
      language: "javascript",
    });
    expect(context.status).toBe(201);
    await cp.call("POST", `/sandboxes/${id}/code`, owner, {
      code: "globalThis.n = 41",
      contextId: context.body.id,
    });
    const answer = await cp.call("POST", `/sandboxes/${id}/code`, owner, {
      code: "n + 1",
      contextId: context.body.id,
    });
    expect(answer.body.results).toEqual([expect.objectContaining({ "text/plain": "42" })]);
  });

  test("endpoints: HTTP and WebSocket through the returned URL, the header form, and 404 for everyone else", async () => {
    await cp.call("POST", `/sandboxes/${id}/files/write`, owner, {
      path: "/root/server.js",
      content: wsEchoServer,
    });
    await cp.call("POST", `/sandboxes/${id}/run`, owner, {
      command: "node /root/server.js > /root/server.log 2>&1",
      background: true,
    });
    const endpoint = await cp.call("GET", `/sandboxes/${id}/endpoints/8080`, owner);
    expect(endpoint.status).toBe(200);
    const { url, token } = endpoint.body as { url: string; token: string };
    expect(url).toBe(`${cp.url}/sandboxes/${id}/ports/8080/${token}/`);
    expect(Date.parse(endpoint.body.expiresAt)).toBeGreaterThan(Date.now());
    await expect
      .poll(async () => (await fetch(url).catch(() => undefined))?.status, { timeout: 30_000 })
      .toBe(200);
    expect(await (await fetch(`${url}some/path?q=1`)).text()).toBe("plain http ok");

    const socket = new WebSocket(`${url.replace(/^http/, "ws")}socket`);
    const echoed = await new Promise<string>((resolve, reject) => {
      socket.on("open", () => socket.send("ping"));
      socket.on("message", (data) => resolve(String(data)));
      socket.on("error", reject);
    });
    socket.close();
    expect(echoed).toBe("echo: ping");

    // The token in a header instead of the path.
    const bare = `${cp.url}/sandboxes/${id}/ports/8080/`;
    expect((await fetch(bare, { headers: { "x-paddock-access-token": token } })).status).toBe(200);
    expect((await fetch(bare)).status).toBe(401);

    // A tampered token, the token of another port, and another account's token: 404.
    const other = await cp.call("POST", "/sandboxes", stranger, { template: "ubuntu", timeout: 300 });
    const theirs = (await cp.call("GET", `/sandboxes/${other.body.id}/endpoints/8080`, stranger)).body.token;
    const port8081 = (await cp.call("GET", `/sandboxes/${id}/endpoints/8081`, owner)).body.token;
    const tampered = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    for (const wrong of [tampered, theirs, port8081]) {
      const answer = await fetch(`${cp.url}/sandboxes/${id}/ports/8080/${wrong}/`);
      expect([answer.status, ((await answer.json()) as { code: string }).code]).toEqual([
        404,
        "sandbox_not_found",
      ]);
    }
    const upgrade = new WebSocket(`ws://${new URL(cp.url).host}/sandboxes/${id}/ports/8080/${theirs}/`);
    const refused = await new Promise<number>((resolve) => {
      upgrade.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
      upgrade.on("open", () => resolve(101));
      upgrade.on("error", () => undefined);
    });
    expect(refused).toBe(404);
    const strangers = await cp.call("GET", `/sandboxes/${id}/endpoints/8080`, stranger);
    expect([strangers.status, strangers.body.code]).toEqual([404, "sandbox_not_found"]);

    // The signed token never reaches the request log.
    const log = logLines.join("");
    expect(log).toContain(`/sandboxes/${id}/ports/8080/[redacted]/`);
    expect(log).not.toContain(token);
    for (const secret of [owner, stranger]) expect(log).not.toContain(secret);
  });
});
