/**
 * E2B's stock `e2b` SDK, from the npm registry and unmodified, against a live Paddock server
 * (real Docker, gVisor): the sandbox lifecycle, listing, keys and the errors it raises, with
 * only E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY set.
 */
import { request } from "node:http";
import { AuthenticationError, NotFoundError, Sandbox, SandboxNotFoundError, TimeoutError } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

/**
 * A WebSocket server in the sandbox's Python alone (no packages): answers one handshake and
 * echoes one short text frame back.
 */
const echoServer = `
import base64, hashlib, socket
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("0.0.0.0", 8765))
server.listen()
while True:
    client, _ = server.accept()
    request = b""
    while b"\\r\\n\\r\\n" not in request:
        request += client.recv(4096)
    key = [line.split(b":", 1)[1].strip() for line in request.split(b"\\r\\n") if line.lower().startswith(b"sec-websocket-key")][0]
    accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    client.sendall(b"HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: " + accept + b"\\r\\n\\r\\n")
    head = client.recv(2)
    mask = client.recv(4)
    payload = bytes(byte ^ mask[i % 4] for i, byte in enumerate(client.recv(head[1] & 127)))
    client.sendall(bytes([0x81, len(payload)]) + payload)
    client.close()
`;

/** A GET to the server sent as written (fetch would resolve its dot segments and set Host). */
function rawGet(server: E2bServer, path: string, headers: Record<string, string> = {}) {
  const url = new URL(server.t.url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const sent = request({ host: url.hostname, port: url.port, path, headers }, (answer) => {
      let body = "";
      answer.on("data", (chunk) => {
        body += chunk;
      });
      answer.on("end", () => resolve({ status: answer.statusCode ?? 0, body }));
    });
    sent.on("error", reject);
    sent.end();
  });
}

/** GET through the server with a Host of `getHost(port)`, as a client with wildcard DNS would. */
function getByHost(server: E2bServer, host: string, headers: Record<string, string> = {}) {
  return rawGet(server, "/", { host, ...headers });
}

describe("the stock e2b SDK: sandboxes", () => {
  let server: E2bServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    server = await startE2bServer();
    Object.assign(process.env, server.env);
    sandbox = await Sandbox.create("base", {
      timeoutMs: 300_000,
      metadata: { suite: "e2b-sandbox", "owner.team": "blue_team-1.0" },
      envs: { GREETING: "hello from e2b" },
      secure: true,
    });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("an e2b_ key is an ordinary Paddock key: E2B's shape, Paddock's API, rotation keeps the shape", async () => {
    expect(server.env.E2B_API_KEY).toMatch(/^e2b_[0-9a-f]{40}$/);
    // The same key drives Paddock's own API: the env given through E2B is in the sandbox.
    const run = await fetch(`${server.t.url}/sandboxes/${sandbox.sandboxId}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.env.E2B_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ command: 'printf %s "$GREETING"' }),
    });
    expect(run.status).toBe(200);
    expect(((await run.json()) as { stdout: string }).stdout).toBe("hello from e2b");

    // Rotation keeps the shape; the old secret stops working at once.
    const session = await server.t.account("e2b-user@example.com");
    const auth = { authorization: `Bearer ${session}`, "content-type": "application/json" };
    const created = await fetch(`${server.t.url}/keys`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "to rotate", format: "e2b" }),
    });
    const { key, secret: before } = (await created.json()) as {
      key: { id: string; prefix: string };
      secret: string;
    };
    expect(key.prefix).toBe(before.slice(0, 10));
    const rotated = await fetch(`${server.t.url}/keys/${key.id}/rotate`, {
      method: "POST",
      headers: { authorization: auth.authorization },
    });
    const { secret: after } = (await rotated.json()) as { secret: string };
    expect(after).toMatch(/^e2b_[0-9a-f]{40}$/);
    await expect(Sandbox.getInfo(sandbox.sandboxId, { apiKey: before })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    expect((await Sandbox.getInfo(sandbox.sandboxId, { apiKey: after })).sandboxId).toBe(sandbox.sandboxId);
  });

  test("getInfo, isRunning and setTimeout describe and move the sandbox", async () => {
    const info = await sandbox.getInfo();
    expect(info).toMatchObject({
      sandboxId: sandbox.sandboxId,
      templateId: "e2b-base",
      state: "running",
      metadata: { suite: "e2b-sandbox", "owner.team": "blue_team-1.0" },
    });
    expect(info.endAt.getTime() - info.startedAt.getTime()).toBeGreaterThan(290_000);
    expect(await sandbox.isRunning()).toBe(true);

    // E2B's setTimeout counts from now and may shorten a lifetime as well as extend it.
    await sandbox.setTimeout(120_000);
    const shorter = (await sandbox.getInfo()).endAt.getTime() - Date.now();
    expect(shorter).toBeGreaterThan(100_000);
    expect(shorter).toBeLessThanOrEqual(120_000);
    await sandbox.setTimeout(600_000);
    expect((await sandbox.getInfo()).endAt.getTime() - Date.now()).toBeGreaterThan(580_000);
  });

  test("connect returns a handle to the same sandbox", async () => {
    const again = await Sandbox.connect(sandbox.sandboxId);
    expect(again.sandboxId).toBe(sandbox.sandboxId);
    expect(await again.isRunning()).toBe(true);
  });

  test("list filters by metadata and state, and pages with nextToken", async () => {
    // One after another, so their start times order them.
    const others: Sandbox[] = [];
    for (const n of [1, 2, 3]) {
      others.push(
        await Sandbox.create("base", { timeoutMs: 120_000, metadata: { suite: "paging", n: String(n) } }),
      );
    }
    try {
      const found = await Sandbox.list({
        query: { metadata: { "owner.team": "blue_team-1.0" } },
      }).nextItems();
      expect(found.map((item) => item.sandboxId)).toEqual([sandbox.sandboxId]);

      const paginator = Sandbox.list({ query: { metadata: { suite: "paging" } }, limit: 2 });
      const first = await paginator.nextItems();
      expect(first).toHaveLength(2);
      expect(paginator.hasNext).toBe(true);
      const second = await paginator.nextItems();
      expect(second).toHaveLength(1);
      expect(paginator.hasNext).toBe(false);
      expect([...first, ...second].map((item) => item.sandboxId).sort()).toEqual(
        others.map((other) => other.sandboxId).sort(),
      );
      // Newest first by default.
      expect(first[0]?.metadata.n).toBe("3");

      await (others[0] as Sandbox).pause();
      const paused = await Sandbox.list({ query: { state: ["paused"] } }).nextItems();
      expect(paused.map((item) => item.sandboxId)).toEqual([others[0]?.sandboxId]);
      expect(paused[0]?.state).toBe("paused");
      const running = await Sandbox.list({
        query: { state: ["running"], metadata: { suite: "paging" } },
      }).nextItems();
      expect(running).toHaveLength(2);
    } finally {
      await Promise.all(others.map((other) => other.kill()));
    }
  });

  test("pause, then connect resumes the sandbox with its files", async () => {
    const paused = await Sandbox.create("base", { timeoutMs: 120_000 });
    const url = `${server.t.url}/sandboxes/${paused.sandboxId}/run`;
    const headers = { authorization: `Bearer ${server.env.E2B_API_KEY}`, "content-type": "application/json" };
    await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ command: "echo kept > /tmp/state" }),
    });
    expect(await paused.pause()).toBe(true);
    expect((await paused.getInfo()).state).toBe("paused");
    expect(await paused.isRunning()).toBe(false);
    // Pausing again is E2B's 409, which the SDK reports as false.
    expect(await Sandbox.pause(paused.sandboxId)).toBe(false);

    const resumed = await Sandbox.connect(paused.sandboxId, { timeoutMs: 90_000 });
    expect((await resumed.getInfo()).state).toBe("running");
    expect(await resumed.isRunning()).toBe(true);
    const read = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ command: "cat /tmp/state" }),
    });
    expect(((await read.json()) as { stdout: string }).stdout).toBe("kept\n");
    await resumed.kill();
  });

  test("getMetrics samples the sandbox's CPU, memory and disk", async () => {
    const metrics = await sandbox.getMetrics();
    expect(metrics).toHaveLength(1);
    const [sample] = metrics;
    expect(sample?.cpuCount).toBeGreaterThan(0);
    expect(sample?.memTotal).toBeGreaterThan(0);
    expect(sample?.memUsed).toBeGreaterThan(0);
    expect(sample?.diskTotal).toBeGreaterThan(0);
    expect(Math.abs((sample?.timestamp.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
  });

  test("getHost(port) names the port: reached with the traffic token, refused without it", async () => {
    const started = await fetch(`${server.t.url}/sandboxes/${sandbox.sandboxId}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.env.E2B_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({
        command:
          "mkdir -p /srv/www && echo served > /srv/www/index.html && cd /srv/www && python3 -m http.server 8000",
        background: true,
      }),
    });
    expect(started.status).toBe(200);
    const host = sandbox.getHost(8000);
    expect(host).toBe(
      `8000-${sandbox.sandboxId}.${new URL(server.t.url).host.replace("127.0.0.1", "localhost")}`,
    );
    const token = sandbox.trafficAccessToken as string;
    expect(token).toBeTruthy();
    let answer = await getByHost(server, host, { "e2b-traffic-access-token": token });
    for (let tries = 0; answer.status === 502 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await getByHost(server, host, { "e2b-traffic-access-token": token });
    }
    expect(answer).toEqual({ status: 200, body: "served\n" });
    expect((await getByHost(server, host)).status).toBe(401);
    expect((await getByHost(server, host, { "e2b-traffic-access-token": `${token}x` })).status).toBe(401);
  });

  test("getHost(port) carries WebSockets too, with the traffic token", async () => {
    await sandbox.files.write("/tmp/echo.py", echoServer);
    await sandbox.commands.run("python3 /tmp/echo.py", { background: true, timeoutMs: 0 });
    const echo = (headers: Record<string, string>) =>
      new Promise<string>((resolve, reject) => {
        const socket = new WebSocket(`${server.t.url.replace("http", "ws")}/`, {
          headers: { host: sandbox.getHost(8765), ...headers },
        });
        socket.once("open", () => socket.send("over the gateway"));
        socket.once("message", (data) => {
          resolve(String(data));
          socket.close();
        });
        socket.once("unexpected-response", (_request, response) =>
          reject(new Error(String(response.statusCode))),
        );
        socket.once("error", reject);
      });
    const token = { "e2b-traffic-access-token": sandbox.trafficAccessToken as string };
    let answer = await echo(token).catch((error: Error) => error.message);
    for (let tries = 0; answer !== "over the gateway" && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answer = await echo(token).catch((error: Error) => error.message);
    }
    expect(answer).toBe("over the gateway");
    await expect(echo({})).rejects.toThrow("401");
  });

  test("E2B's template names map to Paddock's templates", async () => {
    const interpreter = await Sandbox.create("code-interpreter-v1", { timeoutMs: 60_000 });
    try {
      expect((await interpreter.getInfo()).templateId).toBe("e2b-code-interpreter");
    } finally {
      await interpreter.kill();
    }
  });

  test("unknown ids are NotFoundError; kill reports whether there was a sandbox", async () => {
    await expect(Sandbox.getInfo("sbx-doesnotexist")).rejects.toBeInstanceOf(SandboxNotFoundError);
    await expect(Sandbox.connect("sbx-doesnotexist")).rejects.toBeInstanceOf(NotFoundError);
    await expect(Sandbox.setTimeout("sbx-doesnotexist", 60_000)).rejects.toBeInstanceOf(NotFoundError);
    expect(await Sandbox.kill("sbx-doesnotexist")).toBe(false);
    const doomed = await Sandbox.create("base", { timeoutMs: 60_000 });
    expect(await doomed.kill()).toBe(true);
    expect(await Sandbox.kill(doomed.sandboxId)).toBe(false);
    await expect(doomed.getInfo()).rejects.toBeInstanceOf(NotFoundError);
  });

  test("another account's sandbox is not found, and a bad key is an AuthenticationError", async () => {
    const otherKey = await server.keyFor("e2b-other@example.com");
    await expect(Sandbox.getInfo(sandbox.sandboxId, { apiKey: otherKey })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await Sandbox.list({ apiKey: otherKey }).nextItems()).toEqual([]);
    expect(await Sandbox.kill(sandbox.sandboxId, { apiKey: otherKey })).toBe(false);
    await expect(
      Sandbox.create("base", { apiKey: "e2b_0000000000000000000000000000000000000000" }),
    ).rejects.toBeInstanceOf(AuthenticationError);
    await expect(Sandbox.list({ apiKey: "e2b_nope" }).nextItems()).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  test("killing a sandbox ends the streams open to it: a background command's wait() is a TimeoutError", async () => {
    const doomed = await Sandbox.create("base", { timeoutMs: 120_000 });
    const handle = await doomed.commands.run("sleep 1000", { background: true, timeoutMs: 0 });
    const waited = handle.wait().then(
      () => "finished",
      (error: Error) => error,
    );
    await doomed.kill();
    const outcome = await Promise.race([
      waited,
      new Promise((resolve) => setTimeout(() => resolve("still open after 20 s"), 20_000)),
    ]);
    expect(outcome).toBeInstanceOf(TimeoutError);
  });

  test("an expired sandbox is gone: not found through the API, a TimeoutError in the sandbox", async () => {
    const brief = await Sandbox.create("base", { timeoutMs: 2_000 });
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    let running = await brief.isRunning();
    for (let tries = 0; running && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      running = await brief.isRunning();
    }
    expect(running).toBe(false);
    await expect(brief.getInfo()).rejects.toBeInstanceOf(NotFoundError);
    await expect(brief.files.read("/etc/hostname")).rejects.toBeInstanceOf(TimeoutError);
  });

  test("bad input is refused with E2B's error body", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${server.env.E2B_API_URL}${path}`, {
        method: "POST",
        headers: { "x-api-key": server.env.E2B_API_KEY, "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const cases: Array<[string, unknown, number]> = [
      ["/v2/sandboxes", {}, 400],
      ["/v2/sandboxes", "{not json", 400],
      ["/v2/sandboxes", { templateID: "no-such-template" }, 404],
      ["/v2/sandboxes", { templateID: "base", timeout: -1 }, 400],
      ["/v2/sandboxes", { templateID: "base", autoResume: true }, 400],
      [`/sandboxes/${sandbox.sandboxId}/timeout`, { timeout: "soon" }, 400],
    ];
    for (const [path, body, status] of cases) {
      const answer = await post(path, body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      const error = (await answer.json()) as { code: number; message: string };
      expect(error.code).toBe(status);
      expect(error.message).toBeTruthy();
    }
    const badList = await fetch(`${server.env.E2B_API_URL}/v2/sandboxes?nextToken=%%%`, {
      headers: { "x-api-key": server.env.E2B_API_KEY },
    });
    expect(badList.status).toBe(400);
    // The gateway: a wrong access token is 401, a port that is not a port 400.
    const gateway = (headers: Record<string, string>) =>
      fetch(`${server.env.E2B_SANDBOX_URL}/health`, {
        headers: { "E2b-Sandbox-Id": sandbox.sandboxId, ...headers },
      });
    expect((await gateway({ "E2b-Sandbox-Port": "49983", "X-Access-Token": "wrong" })).status).toBe(401);
    expect((await gateway({ "E2b-Sandbox-Port": "port", "X-Access-Token": "wrong" })).status).toBe(400);
    // The traffic token opens the sandbox's ports, never envd's.
    const traffic = { "e2b-traffic-access-token": sandbox.trafficAccessToken as string };
    expect((await gateway({ "E2b-Sandbox-Port": "49983", ...traffic })).status).toBe(401);
    // A path under envd's or the interpreter's port cannot climb out to the rest of execd's API.
    const detail = await fetch(`${server.env.E2B_API_URL}/sandboxes/${sandbox.sandboxId}`, {
      headers: { "x-api-key": server.env.E2B_API_KEY },
    });
    const { envdAccessToken } = (await detail.json()) as { envdAccessToken: string };
    const envdToken = { "E2b-Sandbox-Id": sandbox.sandboxId, "X-Access-Token": envdAccessToken };
    const climbs = ["/e2b/../../ping", "/e2b/%2e%2e/%2e%2e/ping", "/e2b/health/../../../ping"];
    for (const path of climbs) {
      const answer = await rawGet(server, path, { ...envdToken, "E2b-Sandbox-Port": "49983" });
      expect(answer.status, path).toBe(404);
    }
    const viaInterpreter = await rawGet(server, "/e2b/../../../ping", {
      "E2b-Sandbox-Id": sandbox.sandboxId,
      "E2b-Sandbox-Port": "49999",
      ...traffic,
    });
    expect(viaInterpreter.status).toBe(404);
  });
});
