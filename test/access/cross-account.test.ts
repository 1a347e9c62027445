/**
 * Another account's ids are 404 on every route, stream and WebSocket, derived from the routes
 * the server itself registered (DESIGN.md, "Trust boundaries"). Account A makes one of
 * everything; account B then calls every registered route that takes an id, with every method,
 * with A's ids put in, over HTTP and as a WebSocket upgrade, and every MCP tool; every list B
 * can read is searched for A's ids. Afterwards A's objects are all as they were.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RegisteredRoute } from "@paddock/server";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openEventStream, send, upgradeStatus } from "../support/raw-http.js";

type Json = any;

/** A's objects, by what a route's parameter names. */
interface Objects {
  sandbox: string;
  paused: string;
  e2bSandbox: string;
  operatorSandbox: string;
  volume: string;
  secretName: string;
  memory: string;
  templateName: string;
  templateId: string;
  build: string;
  key: string;
  keySecret: string;
  context: string;
}

/**
 * What to put for each parameter, by the path segment before it and the parameter's name, so
 * `:id` after `keys` is A's key and after `sandboxes` A's sandbox. A route with a parameter not
 * listed here fails the sweep: a new route cannot escape it.
 */
function parameterValues(a: Objects): Record<string, string[]> {
  return {
    "sandboxes/:id": [a.sandbox, a.e2bSandbox, a.paused],
    "sandboxes/:sandboxID": [a.e2bSandbox, a.sandbox],
    "sandboxes/:sandboxId": [a.operatorSandbox, a.sandbox],
    "ports/:port": ["8000"],
    "endpoints/:port": ["8000"],
    "proxy/:port": ["8000"],
    "diagnostics/:kind": ["logs"],
    "volumes/:id": [a.volume],
    "volumes/:volumeID": [a.volume],
    "secrets/:name": [a.secretName],
    "memory/:id": [a.memory],
    "keys/:id": [a.key],
    "templates/:name": [a.templateName],
    "templates/:templateID": [a.templateId, a.templateName],
    "builds/:buildId": [a.build],
    "builds/:buildID": [a.build],
    "files/:hash": ["a".repeat(64)],
    "aliases/:alias": [a.templateName],
    // Invoices live at the account's payment provider: an id B cannot own either way.
    "invoices/:id": ["in_accountA1"],
    // Snapshots are the operator's (/v1), which refuses an account's key before reading ids.
    "snapshots/:snapshotId": [a.operatorSandbox],
  };
}

/** Every concrete path for a route pattern, or the parameters the table does not know. */
function fill(url: string, values: Record<string, string[]>): { paths: string[]; unknown: string[] } {
  const segments = url.split("/");
  let paths = [""];
  const unknown: string[] = [];
  segments.slice(1).forEach((segment, index) => {
    let options = [segment];
    if (segment.startsWith(":")) {
      const key = `${segments[index]}/${segment}`;
      const known = values[key];
      if (!known) unknown.push(`${key} (in ${url})`);
      options = known ?? ["unknown"];
    } else if (segment === "*") options = ["probe/path"];
    paths = paths.flatMap((path) => options.map((option) => `${path}/${option}`));
  });
  return { paths, unknown };
}

/**
 * Bodies and queries a call needs to pass validation, so it reaches the ownership check rather
 * than a 400: a call that B makes for real (a command, a write) must be the one refused.
 */
function requestsFor(a: Objects): Record<string, { body?: unknown; query?: string; raw?: string }> {
  return {
    "POST /sandboxes/:id/code": { body: { code: "open('/tmp/b-was-here','w')", language: "python" } },
    "POST /sandboxes/:id/code/contexts": { body: { language: "python" } },
    "POST /sandboxes/:id/directories": { body: { path: "/tmp/b-was-here" } },
    "DELETE /sandboxes/:id/files": { query: "path=/tmp/a-file.txt" },
    "GET /sandboxes/:id/files/download": { query: "path=/tmp/a-file.txt" },
    "GET /sandboxes/:id/files/list": { query: "path=/tmp" },
    "POST /sandboxes/:id/files/move": { body: { from: "/tmp/a-file.txt", to: "/tmp/b-was-here" } },
    "POST /sandboxes/:id/files/read": { body: { path: "/tmp/a-file.txt" } },
    "POST /sandboxes/:id/files/search": { body: { path: "/tmp", pattern: "a-file" } },
    "POST /sandboxes/:id/files/upload": { query: "path=/tmp/b-was-here", raw: "b" },
    "POST /sandboxes/:id/files/write": { body: { path: "/tmp/a-file.txt", content: "b" } },
    "PATCH /sandboxes/:id/metadata": { body: { owner: "b" } },
    "PATCH /sandboxes/:id/network-policy": { body: { egress: [{ action: "deny", target: "0.0.0.0/0" }] } },
    "DELETE /sandboxes/:id/network-policy": { query: "target=example.com" },
    "POST /sandboxes/:id/renew": { body: { timeout: 3600 } },
    "POST /sandboxes/:id/run": { body: { command: "touch /tmp/b-was-here" } },
    "POST /sandboxes/:id/run/stream": { body: { command: "touch /tmp/b-was-here" } },
    // B's templates are named in B's namespace: what B cannot do is build on A's.
    "POST /templates/:name/builds": { body: { from: a.templateName, steps: [] } },
    "GET /v1/sandboxes/:sandboxId/diagnostics/:kind/content": {
      query: `scope=all&expires=${Math.floor(Date.now() / 1000) + 600}&signature=${"A".repeat(43)}`,
    },
    "POST /e2b/sandboxes/:sandboxID/connect": { body: { timeout: 10 } },
    "POST /e2b/v2/sandboxes/:sandboxID/connect": { body: { timeout: 10 } },
    "POST /e2b/sandboxes/:sandboxID/timeout": { body: { timeout: 1 } },
    "POST /e2b/sandboxes/:sandboxID/refreshes": { body: { duration: 1 } },
    "PUT /e2b/sandboxes/:sandboxID/network": { body: { denyOut: ["0.0.0.0/0"] } },
  };
}

/**
 * Routes whose credential is not the account's, or that never reach an id, and what they answer
 * B instead of a not-found. Every other route must answer its surface's not-found.
 */
const otherRefusals: Record<string, { status: number; why: string }> = {
  "GET /v1/sandboxes/:sandboxId/diagnostics/:kind/content": {
    status: 403,
    why: "a signed link is the credential; a forged one is forbidden",
  },
  "PUT /e2b/templates/:templateID/files/:hash": {
    status: 401,
    why: "a signed upload link is the credential; a forged one is unauthorized",
  },
  "POST /payments/invoices/:id/finalize": {
    status: 409,
    why: "B has no provider key, so no invoice of anyone's is reached (payments.test.ts covers one with a key)",
  },
  "POST /templates/:name/builds": {
    status: 400,
    why: "the name is B's own namespace; building from A's template is an unknown `from`",
  },
};

/** What B must get: the surface's not-found, or the route's documented refusal. */
function expectedStatus(route: RegisteredRoute): number {
  const other = otherRefusals[`${route.method === "HEAD" ? "GET" : route.method} ${route.url}`];
  if (other) return other.status;
  // The runtime API is the operator's: an account's key is no key there.
  if (route.url.startsWith("/v1/")) return 401;
  return 404;
}

/** A path's surface, for the counts. */
function surfaceOf(url: string): string {
  if (url.startsWith("/v1/")) return "/v1";
  if (url.startsWith("/e2b/")) return "/e2b";
  if (url.startsWith("/mcp")) return "mcp";
  return "control plane";
}

describe("another account's ids, on every registered route", () => {
  let t: TestServer;
  let a: Objects;
  let aSession: string;
  let aEmail: string;
  let bKey: string;
  /** How B's calls carry its credential: its key in every header, or the dashboard's cookie. */
  let bVia: "key" | "cookie" = "key";
  let bSession: string;
  let bEventsText = "";
  let bEventsStop: AbortController;
  /** A's own event stream, open through the sweep: nothing B does may end it. */
  let aEvents: Awaited<ReturnType<typeof openEventStream>>;
  const aSecretValue = "a-secret-value-7f3e";
  const aMemoryText = "account a remembers the launch code 4821";
  const aFileText = "account a's file 93b1";
  /** Calls and upgrades B made, per surface. */
  const made: Record<string, number> = {};

  const call = async (method: string, path: string, credential: string, body?: unknown) => {
    const response = await fetch(`${t.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${credential}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    return { status: response.status, text, body: (text.startsWith("{") ? JSON.parse(text) : text) as Json };
  };
  const e2b = async (method: string, path: string, key: string, body?: unknown) => {
    const response = await fetch(`${t.url}/e2b${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    return { status: response.status, text, body: (text ? JSON.parse(text) : undefined) as Json };
  };

  /**
   * B's call: its key in every header a surface reads a credential from, and a forged token for
   * the public endpoints (whose credential is a signed token). The body is read for at most 2 s,
   * so a stream that stays open is cut there rather than hanging the sweep.
   */
  const bHeaders = (): Record<string, string> => ({
    ...(bVia === "cookie"
      ? { cookie: `paddock_session=${bSession}` }
      : { authorization: `Bearer ${bKey}`, "x-api-key": bKey, "runtime-api-key": bKey }),
    "x-paddock-access-token": `${Math.floor(Date.now() / 1000) + 600}.${"A".repeat(43)}`,
  });
  const asB = async (method: string, path: string, body?: unknown, raw?: string) => {
    made[surfaceOf(path)] = (made[surfaceOf(path)] ?? 0) + 1;
    if (raw !== undefined)
      return send(
        `${t.url}${path}`,
        method,
        { ...bHeaders(), "content-type": "application/octet-stream" },
        raw,
      );
    // A method that may carry a body gets an empty JSON object, so it passes what needs one.
    const sent = body ?? (["POST", "PUT", "PATCH", "QUERY"].includes(method) ? {} : undefined);
    return send(
      `${t.url}${path}`,
      method,
      { ...bHeaders(), ...(sent === undefined ? {} : { "content-type": "application/json" }) },
      sent === undefined ? undefined : JSON.stringify(sent),
    );
  };

  /** A's data that no answer to B may contain. */
  const aData = () => [aEmail, aSecretValue, aMemoryText, aFileText, a.keySecret, "a-team"];

  beforeAll(async () => {
    t = await startTestServer();
    aEmail = "account-a@example.com";
    aSession = await t.account(aEmail);
    bSession = await t.account("account-b@example.com");
    bKey = (await call("POST", "/keys", bSession, { name: "b", format: "e2b" })).body.secret;
    // B listens to its sandbox events from the start: nothing of A's may arrive on it.
    bEventsStop = new AbortController();
    void fetch(`${t.url}/sandboxes/events`, {
      headers: { authorization: `Bearer ${bKey}` },
      signal: bEventsStop.signal,
    })
      .then(async (response) => {
        for await (const chunk of response.body as ReadableStream<Uint8Array>)
          bEventsText += Buffer.from(chunk).toString();
      })
      .catch(() => undefined);

    const key = await call("POST", "/keys", aSession, { name: "a", format: "e2b" });
    expect(key.status, key.text).toBe(201);
    aEvents = await openEventStream(`${t.url}/sandboxes/events`, key.body.secret);
    const templateName = "a-private-template";
    const build = await call("POST", `/templates/${templateName}/builds`, aSession, {
      from: "python",
      steps: [{ type: "ENV", values: { BUILT_FOR: "a" } }],
      description: "a-team template",
    });
    expect(build.status, build.text).toBe(202);
    const [sandbox, paused, e2bSandbox, operatorSandbox, volume, secret, memory] = await Promise.all([
      call("POST", "/sandboxes", aSession, {
        template: "python",
        timeout: 900,
        metadata: { team: "a-team" },
      }),
      // Paused below; it must not wake for B.
      call("POST", "/sandboxes", aSession, { template: "python", timeout: 900 }),
      e2b("POST", "/sandboxes", key.body.secret, { templateID: "base", timeout: 900 }),
      t.api("/v1/sandboxes", {
        method: "POST",
        body: JSON.stringify({
          image: { uri: "paddock/base:bookworm" },
          entrypoint: ["sleep", "infinity"],
          timeout: 900,
        }),
      }),
      call("POST", "/volumes", aSession, { name: "a-volume" }),
      call("POST", "/secrets", aSession, { name: "A_SECRET", value: aSecretValue }),
      call("POST", "/memory", aSession, { content: aMemoryText }),
    ]);
    expect(sandbox.status, sandbox.text).toBe(201);
    expect(paused.status, paused.text).toBe(201);
    const pausing = await call("POST", `/sandboxes/${paused.body.id}/pause`, aSession);
    expect(pausing.status, pausing.text).toBe(200);
    expect(e2bSandbox.status, e2bSandbox.text).toBe(201);
    expect(operatorSandbox.status, await operatorSandbox.clone().text()).toBe(202);
    expect(volume.status, volume.text).toBe(201);
    expect(secret.status, secret.text).toBe(201);
    expect(memory.status, memory.text).toBe(201);
    const written = await call("POST", `/sandboxes/${sandbox.body.id}/files/write`, aSession, {
      path: "/tmp/a-file.txt",
      content: aFileText,
    });
    expect(written.status, written.text).toBe(200);
    const context = await call("POST", `/sandboxes/${sandbox.body.id}/code/contexts`, aSession, {
      language: "python",
    });
    expect(context.status, context.text).toBe(201);
    const template = await call("GET", `/templates/${templateName}`, aSession);
    expect(template.status, template.text).toBe(200);
    a = {
      sandbox: sandbox.body.id,
      paused: paused.body.id,
      e2bSandbox: e2bSandbox.body.sandboxID,
      operatorSandbox: ((await operatorSandbox.json()) as Json).id,
      volume: volume.body.id,
      secretName: "A_SECRET",
      memory: memory.body.id,
      templateName,
      templateId: template.body.id,
      build: build.body.build.id,
      key: key.body.key.id,
      keySecret: key.body.secret,
      context: context.body.id,
    };
    await waitForBuild(templateName, a.build);
  }, 300_000);
  afterAll(async () => {
    console.log("cross-account: calls and upgrades B made, per surface", made);
    bEventsStop?.abort();
    await aEvents?.close();
    await t?.dispose();
  });

  const waitForBuild = async (name: string, build: string) => {
    for (let i = 0; i < 300; i++) {
      const status = (await call("GET", `/templates/${name}/builds/${build}`, aSession)).body.status;
      if (status !== "waiting" && status !== "building") return status;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error("the build did not finish");
  };

  /** Everything about A's objects that B's calls must leave as it was. */
  const snapshotOfA = async () => {
    const sandbox = (await call("GET", `/sandboxes/${a.sandbox}`, aSession)).body;
    return {
      sandbox: { state: sandbox.state, metadata: sandbox.metadata, expiresAt: sandbox.expiresAt },
      policy: (await call("GET", `/sandboxes/${a.sandbox}/network-policy`, aSession)).text,
      file: (await call("POST", `/sandboxes/${a.sandbox}/files/read`, aSession, { path: "/tmp/a-file.txt" }))
        .body.content,
      trespass: (
        await call("POST", `/sandboxes/${a.sandbox}/run`, aSession, {
          command: "ls /tmp/b-was-here 2>&1 | head -1",
        })
      ).body.stdout,
      paused: (await call("GET", `/sandboxes/${a.paused}`, aSession)).body.state,
      e2bSandbox: await e2b("GET", `/sandboxes/${a.e2bSandbox}`, a.keySecret).then(({ body }) => ({
        state: body.state,
        endAt: body.endAt,
      })),
      e2bTrespass: (
        await call("POST", `/sandboxes/${a.e2bSandbox}/run`, aSession, { command: "ls /tmp/b-was-here 2>&1" })
      ).body.stdout,
      operatorSandbox: ((await (await t.api(`/v1/sandboxes/${a.operatorSandbox}`)).json()) as Json).status
        .state,
      volume: (await call("GET", `/volumes/${a.volume}`, aSession)).body.name,
      secrets: (await call("GET", "/secrets", aSession)).body.items.map((item: Json) => item.name),
      memory: (await call("GET", "/memory", aSession)).body.items.map((item: Json) => item.content),
      template: (await call("GET", `/templates/${a.templateName}`, aSession)).body.description,
      build: (await call("GET", `/templates/${a.templateName}/builds/${a.build}`, aSession)).body.status,
      keys: (await call("GET", "/keys", aSession)).body.items.map((item: Json) => item.id),
      keyWorks: (await call("GET", "/sandboxes", a.keySecret)).status,
      context: (
        await call("POST", `/sandboxes/${a.sandbox}/code`, aSession, {
          code: "41 + 1",
          language: "python",
          contextId: a.context,
        })
      ).status,
    };
  };

  test("the route table has every surface's routes", () => {
    const urls = t.server.routes.map((route) => route.url);
    for (const url of [
      "/sandboxes/:id",
      "/sandboxes/:id/terminal",
      "/sandboxes/:id/metrics/watch",
      "/e2b/sandboxes/:sandboxID",
      "/v1/sandboxes/:sandboxId",
      "/v1/sandboxes/:sandboxId/proxy/:port/*",
      "/mcp",
    ])
      expect(urls).toContain(url);
  });

  test("B gets the surface's not-found on every route with A's ids, over HTTP and WebSocket, and changes nothing", async () => {
    const before = await snapshotOfA();
    expect(before.sandbox.state).toBe("Running");
    expect(before.paused).toBe("Paused");
    expect(before.e2bSandbox.state).toBe("running");
    expect(before.file).toBe(aFileText);
    expect(before.trespass).toContain("No such file");
    expect(before.context).toBe(200);

    const values = parameterValues(a);
    // A build in B's namespace goes last, and B's template it leaves is removed after (below).
    const makesInB = (route: RegisteredRoute) => route.url === "/templates/:name/builds";
    const routes = t.server.routes
      .filter((route) => route.url.includes(":") || route.url.includes("*"))
      .sort((x, y) => Number(makesInB(x)) - Number(makesInB(y)));
    const unknown = [...new Set(routes.flatMap((route) => fill(route.url, values).unknown))];
    expect(unknown, "parameters the sweep does not know how to fill").toEqual([]);

    const requests = requestsFor(a);
    const requestOf = (method: string, url: string) =>
      requests[`${method === "HEAD" ? "GET" : method} ${url}`] ?? {};
    const wrong: string[] = [];
    const leaked: string[] = [];
    // With B's key; then the control plane again as the dashboard calls it, with B's session cookie.
    for (const via of ["key", "cookie"] as const) {
      bVia = via;
      for (const route of routes) {
        if (via === "cookie" && surfaceOf(route.url) !== "control plane") continue;
        const request = requestOf(route.method, route.url);
        for (const path of fill(route.url, values).paths) {
          const url = request.query ? `${path}?${request.query}` : path;
          const answer = await asB(route.method, url, request.body, request.raw);
          if (answer.status !== expectedStatus(route))
            wrong.push(`${via}: ${route.method} ${url}: ${answer.status} ${answer.text.slice(0, 200)}`);
          for (const data of aData())
            if (answer.text.includes(data)) leaked.push(`${via}: ${route.method} ${url}: ${data}`);
        }
      }
      // A refused build still names the template in B's account (made on its first build).
      expect((await asB("DELETE", `/templates/${a.templateName}`)).status).toBe(204);
    }
    bVia = "key";
    // Every GET route as a WebSocket too: refused before any upgrade.
    for (const route of routes.filter((candidate) => candidate.method === "GET")) {
      const { query } = requestOf("GET", route.url);
      for (const path of fill(route.url, values).paths) {
        made[surfaceOf(path)] = (made[surfaceOf(path)] ?? 0) + 1;
        const url = query ? `${path}?${query}` : path;
        const status = await upgradeStatus(`${t.url.replace("http", "ws")}${url}`, bHeaders());
        if (status !== expectedStatus(route)) wrong.push(`WebSocket ${url}: ${status}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(leaked).toEqual([]);
    console.log(
      `cross-account sweep: ${routes.length} routes with parameters (per surface, HEAD included)`,
      Object.fromEntries(
        ["/v1", "/e2b", "mcp", "control plane"].map((surface) => [
          surface,
          routes.filter((route) => surfaceOf(route.url) === surface).length,
        ]),
      ),
    );

    expect(await snapshotOfA()).toEqual(before);
    // B's DELETE and rotate of A's key id were 404, and revoked nothing: A's stream is still open.
    expect(await aEvents.by(100)).toBe("open");
  }, 300_000);

  test("E2B's in-sandbox gateway refuses B's credentials for A's sandbox, by header and by host", async () => {
    const port = new URL(t.url).port;
    const headers = { "x-access-token": bKey, authorization: `Bearer ${bKey}` };
    const byHeader = { ...headers, "e2b-sandbox-id": a.e2bSandbox };
    const attempts = await Promise.all([
      send(`${t.url}/e2b/files?path=/tmp/a-file.txt`, "GET", { ...byHeader, "e2b-sandbox-port": "49983" }),
      send(
        `${t.url}/e2b/process.Process/Start`,
        "POST",
        { ...byHeader, "content-type": "application/json" },
        JSON.stringify({ process: { cmd: "touch", args: ["/tmp/b-was-here"] } }),
      ),
      send(
        `${t.url}/e2b/execute`,
        "POST",
        { ...byHeader, "e2b-sandbox-port": "49999", "content-type": "application/json" },
        JSON.stringify({ code: "open('/tmp/b-was-here','w')" }),
      ),
      send(`${t.url}/files?path=/tmp/a-file.txt`, "GET", {
        ...headers,
        host: `49983-${a.e2bSandbox}.localhost:${port}`,
      }),
    ]);
    for (const answer of attempts) {
      expect(answer.status).toBe(401);
      expect(answer.text).not.toContain(aFileText);
    }
    made["e2b gateway"] = attempts.length + 1;
    expect(
      await upgradeStatus(`${t.url.replace("http", "ws")}/e2b/ws`, {
        ...headers,
        "e2b-sandbox-id": a.e2bSandbox,
        "e2b-sandbox-port": "8000",
      }),
    ).toBe(401);
  });

  test("every MCP tool with A's ids is refused, and B's listings hold none of A's", async () => {
    const mcp = new Client({ name: "cross-account", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${bKey}` } },
      }),
    );
    /** What to put in each tool argument; a tool with another required argument fails here. */
    const argumentValues: Record<string, unknown> = {
      sandboxId: a.sandbox,
      template: a.templateName,
      path: "/tmp/a-file.txt",
      content: "b",
      command: "touch /tmp/b-was-here",
      code: "open('/tmp/b-was-here','w')",
      port: 8000,
    };
    const { tools } = await mcp.listTools();
    const unmapped: string[] = [];
    const wrong: string[] = [];
    for (const tool of tools) {
      const properties = Object.keys(tool.inputSchema.properties ?? {});
      const required = tool.inputSchema.required ?? [];
      for (const name of required) if (!(name in argumentValues)) unmapped.push(`${tool.name}.${name}`);
      const args = Object.fromEntries(
        properties.filter((name) => name in argumentValues).map((name) => [name, argumentValues[name]]),
      );
      made.mcp = (made.mcp ?? 0) + 1;
      const result = (await mcp.callTool({ name: tool.name, arguments: args })) as Json;
      const text = JSON.stringify(result);
      const takesAnId = "sandboxId" in args || "template" in args;
      if (takesAnId && (!result.isError || !/not found|no sandbox|no template/i.test(text)))
        wrong.push(`${tool.name}: ${text.slice(0, 300)}`);
      for (const id of [...Object.values(a), ...aData()])
        if (text.includes(id) && !(takesAnId && [a.sandbox, a.templateName].includes(id)))
          wrong.push(`${tool.name} showed ${id}`);
    }
    await mcp.close();
    expect(unmapped).toEqual([]);
    expect(wrong).toEqual([]);
    const after = await snapshotOfA();
    expect(after.trespass).toContain("No such file");
    expect(after.file).toBe(aFileText);
  }, 120_000);

  test("no list B can read holds any of A's ids or data, the event stream included", async () => {
    const lists = t.server.routes.filter(
      (route) => route.method === "GET" && !route.url.includes(":") && !route.url.includes("*"),
    );
    const found: string[] = [];
    for (const route of lists) {
      const answer = await asB("GET", route.url);
      // B's audit log names what B itself asked for: the sweep built a template of B's own under
      // the name A's has (names are per account), so that name is B's there.
      const ownWords = route.url === "/audit" ? [a.templateName] : [];
      for (const value of [...Object.values(a), ...aData()])
        if (answer.text.includes(value) && !ownWords.includes(value)) found.push(`${route.url}: ${value}`);
    }
    for (const value of [...Object.values(a), ...aData()])
      if (bEventsText.includes(value)) found.push(`/sandboxes/events: ${value}`);
    expect(found).toEqual([]);
    // The stream was open, and heard something of B's own: a sandbox B could not make from A's template.
    expect(lists.length).toBeGreaterThan(10);
    expect((await asB("POST", "/sandboxes", { template: a.templateName })).status).toBe(404);
    expect((await asB("POST", "/e2b/sandboxes", { templateID: a.templateId })).status).toBe(404);
  });
});
