import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Errors, ExecdErrors, isPaddockError, PaddockError } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from "vitest";
import { parse } from "yaml";
import { execdDefinitionPath, generateExecdTypes } from "../../scripts/execd-types.js";
import type { SandboxOperations } from "../sandbox-operations.js";
import { ExecdClient } from "./client.js";
import type { components, operations } from "./execd-api.gen.js";
import { e2bProtocolPrefixes, extensionRoutes } from "./extensions.js";

type Schemas = components["schemas"];

/** A request the fake execd saw. */
interface Seen {
  route: string;
  token: string | undefined;
  body: string;
}

const fileInfo: Schemas["FileInfo"] = {
  path: "/tmp/a",
  type: "file",
  size: 5,
  modified_at: "2026-01-01T00:00:00Z",
  created_at: "2026-01-01T00:00:00Z",
  owner: "root",
  group: "root",
  mode: 644,
};
const metrics: Schemas["Metrics"] = {
  cpu_count: 2,
  cpu_used_pct: 1.5,
  mem_total_mib: 512,
  mem_used_mib: 12,
  timestamp: 1,
};

function sse(res: ServerResponse, events: object[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const event of events) res.write(`${JSON.stringify(event)}\n\n`);
  res.end();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** What the fake execd answers on each path, just enough for the client to read it; `{}` elsewhere. */
const answers: Record<string, (res: ServerResponse, url: URL) => void> = {
  "/files/info": (res, url) => json(res, 200, { [String(url.searchParams.get("path"))]: fileInfo }),
  "/files/download": (res) => {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end("hello");
  },
  "/files/search": (res) => json(res, 200, [fileInfo]),
  "/directories/list": (res) => json(res, 200, [fileInfo]),
  "/metrics": (res) => json(res, 200, metrics),
  "/metrics/watch": (res) => sse(res, [{ type: "metrics", ...metrics }]),
  "/e2b/envd/metrics": (res) => json(res, 200, { ts: 1, cpu_count: 2, cpu_used_pct: 1, mem_used: 1 }),
  "/activity": (res) => json(res, 200, { running: 2, requests: 1 }),
  "/code/context": (res) => json(res, 200, { id: "context-1", language: "python" }),
  "/command": (res) => sse(res, commandEvents),
  "/code": (res) => sse(res, commandEvents),
  "/pty": (res) =>
    sse(res, [
      { type: "init", text: "pty-1" },
      { type: "exit", exit_code: 0 },
    ]),
};
const commandEvents = [
  { type: "init", text: "run-1" },
  { type: "stdout", text: "hi" },
  { type: "execution_complete", exit_code: 0 },
];

describe("the execd client against the committed wire definition", () => {
  let server: Server;
  let port: number;
  const seen: Seen[] = [];
  let refuseWith: { status: number; body: unknown } | undefined;
  let exitCause: PaddockError | undefined;
  const sandboxes = {
    target: async () => ({ host: "127.0.0.1", port }),
    tokens: () => ({ execd: "execd-token", egress: "", access: "" }),
    exitCause: async () => exitCause,
  } as unknown as SandboxOperations;

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", "http://execd");
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const token = req.headers["x-execd-access-token"];
      seen.push({
        route: `${req.method} ${url.pathname}`,
        token: typeof token === "string" ? token : undefined,
        body: Buffer.concat(chunks).toString(),
      });
      if (refuseWith) return json(res, refuseWith.status, refuseWith.body);
      (answers[url.pathname] ?? ((reply: ServerResponse) => json(reply, 200, {})))(res, url);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server?.close());

  const drain = async (events: AsyncIterable<unknown>) => {
    const all: unknown[] = [];
    for await (const event of events) all.push(event);
    return all;
  };

  /** One call of every operation of the client; the type makes a new one a compile error until it is here. */
  const everyOperation: { [K in keyof ExecdClient]: (execd: ExecdClient) => Promise<unknown> } = {
    runCommand: (execd) => drain(execd.runCommand({ command: "echo hi" })),
    createCodeContext: (execd) => execd.createCodeContext("python"),
    runCode: (execd) => drain(execd.runCode("1 + 1", { language: "python" })),
    fileInfo: (execd) => execd.fileInfo("/tmp/a"),
    download: async (execd) => (await execd.download("/tmp/a", "bytes=0-1")).text(),
    upload: (execd) => execd.upload({ path: "/tmp/a", mode: 644 }, [Buffer.from("hello")]),
    move: (execd) => execd.move("/tmp/a", "/tmp/b"),
    search: (execd) => execd.search("/tmp", "*.txt"),
    listDirectory: (execd) => execd.listDirectory("/tmp", 2),
    removeFile: (execd) => execd.removeFile("/tmp/a"),
    removeDirectory: (execd) => execd.removeDirectory("/tmp/d"),
    makeDirectory: (execd) => execd.makeDirectory("/tmp/d", 755),
    metrics: (execd) => execd.metrics(),
    watchMetrics: (execd) => drain(execd.watchMetrics()),
    envdMetrics: (execd) => execd.envdMetrics(),
    activity: (execd) => execd.activity(),
    startTerminal: (execd) => drain(execd.startTerminal({ cols: 80, rows: 24 })),
    terminalInput: (execd) => execd.terminalInput("pty-1", Buffer.from("ls\n")),
    resizeTerminal: (execd) => execd.resizeTerminal("pty-1", { rows: 30, cols: 100 }),
    setEnvironment: (execd) => execd.setEnvironment({ A: "1" }),
  };

  /** `METHOD /path` of the yaml, as patterns over concrete paths. */
  function definedRoutes(): RegExp[] {
    const document = parse(readFileSync(execdDefinitionPath, "utf8")) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(document.paths).flatMap(([path, item]) =>
      ["get", "post", "put", "delete", "patch"]
        .filter((method) => item[method])
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    return [...routes, ...extensionRoutes].map(
      (route) => new RegExp(`^${route.replace(/\{\w+\}/g, "[^/]+")}$`),
    );
  }

  test("every path and method the client calls is in execd-api.yaml or named as an extension", async () => {
    const execd = await ExecdClient.of(sandboxes, "sandbox-1", "owner-1");
    seen.length = 0;
    for (const call of Object.values(everyOperation)) await call(execd);
    // The readiness probe, asked of a container's address before any client exists.
    const ping = ExecdClient.ping("10.0.0.9", "execd-token");
    seen.push({
      route: `GET ${new URL(ping.url).pathname}`,
      token: ping.headers["X-EXECD-ACCESS-TOKEN"],
      body: "",
    });

    const routes = definedRoutes();
    const undefinedRoutes = seen
      .map((request) => request.route)
      .filter((route) => !routes.some((r) => r.test(route)));
    expect(undefinedRoutes).toEqual([]);
    expect(seen.length).toBeGreaterThanOrEqual(Object.keys(everyOperation).length + 1);
    expect(seen.filter((request) => request.token !== "execd-token")).toEqual([]);
  });

  test("the extensions are not in the yaml, and the yaml is the published one, unmodified", () => {
    const document = parse(readFileSync(execdDefinitionPath, "utf8")) as { paths: Record<string, unknown> };
    for (const route of extensionRoutes)
      expect(document.paths[route.split(" ")[1] as string], route).toBeUndefined();
    const recorded = readFileSync(join(import.meta.dirname, "README.md"), "utf8").match(
      /sha256 ([0-9a-f]{64})/,
    )?.[1];
    const actual = createHash("sha256").update(readFileSync(execdDefinitionPath)).digest("hex");
    expect(actual).toBe(recorded);
  });

  test("execd-api.gen.ts is generated from the committed yaml (run `npm run generate -w @paddock/runtime`)", async () => {
    expect(readFileSync(join(import.meta.dirname, "execd-api.gen.ts"), "utf8")).toBe(
      await generateExecdTypes(),
    );
  });

  test("bodies go out in the yaml's shapes", async () => {
    const execd = await ExecdClient.of(sandboxes, "sandbox-1", "owner-1");
    seen.length = 0;
    await execd.move("/tmp/a", "/tmp/b");
    await execd.makeDirectory("/tmp/d", 755);
    await execd.upload({ path: "/tmp/u", mode: 600 }, [Buffer.from("bytes")]);
    await drain(execd.runCode("x", { language: "python" }));
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual([{ src: "/tmp/a", dest: "/tmp/b" }]);
    expect(JSON.parse(seen[1]?.body ?? "")).toEqual({ "/tmp/d": { mode: 755 } });
    expect(seen[2]?.body).toMatch(/name="metadata"\r\n\r\n\{"path":"\/tmp\/u","mode":600\}\r\n/);
    expect(seen[2]?.body).toMatch(/name="file"; filename="file"\r\n\r\nbytes\r\n--/);
    expect(JSON.parse(seen[3]?.body ?? "")).toEqual({
      context: { id: "default", language: "python" },
      code: "x",
    });
  });

  test("execd's refusals come back as registry errors by their code; a fault of ours or an unknown code by status", async () => {
    const execd = await ExecdClient.of(sandboxes, "sandbox-1", "owner-1");
    const refusal = async (status: number, body: unknown, call: () => Promise<unknown>) => {
      refuseWith = { status, body };
      try {
        return await call().then(
          () => undefined,
          (error: unknown) => error,
        );
      } finally {
        refuseWith = undefined;
      }
    };
    const busy = await refusal(409, { code: "context_busy", message: "busy" }, () =>
      drain(execd.runCode("x", { id: "c" })),
    );
    expect(busy).toMatchObject({ code: ExecdErrors.contextBusy.code, status: 409, message: "busy" });
    const wrongToken = await refusal(401, { code: "unauthorized", message: "no" }, () => execd.metrics());
    expect(wrongToken).toMatchObject({ code: Errors.invalidRequest.code });
    const unknown = await refusal(500, { code: "something_new", message: "?" }, () => execd.move("/a", "/b"));
    expect(unknown).toMatchObject({ code: Errors.endpointUnavailable.code });
    const upload = await refusal(400, { code: "is_a_directory", message: "dir" }, () =>
      execd.upload({ path: "/tmp" }, [Buffer.from("x")]),
    );
    expect(upload).toMatchObject({ code: ExecdErrors.isADirectory.code });
  });

  test("an execd that does not answer is the sandbox's own end when it has one", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const gone = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const silent = {
      ...sandboxes,
      target: async () => ({ host: "127.0.0.1", port: gone }),
    } as unknown as SandboxOperations;
    const execd = await ExecdClient.of(silent, "sandbox-1");
    const unanswered = await execd.metrics().catch((error: unknown) => error);
    expect(isPaddockError(unanswered) && unanswered.code).toBe(Errors.endpointUnavailable.code);
    exitCause = new PaddockError(Errors.sandboxOomKilled, "killed for memory");
    try {
      for (const call of [() => execd.metrics(), () => drain(execd.runCommand({ command: "x" }))]) {
        const error = await call().catch((caught: unknown) => caught);
        expect(isPaddockError(error) && error.code).toBe(Errors.sandboxOomKilled.code);
      }
    } finally {
      exitCause = undefined;
    }
  });

  test("the E2B gateway's target: execd's address and token, and the protocol's prefix", async () => {
    const target = await ExecdClient.forwarding(sandboxes, "sandbox-1", "code-interpreter");
    expect(target).toEqual({
      host: "127.0.0.1",
      port,
      headers: { "x-execd-access-token": "execd-token" },
      pathPrefix: e2bProtocolPrefixes["code-interpreter"],
    });
  });

  test("request and answer types are the generated ones", () => {
    expectTypeOf<Parameters<ExecdClient["runCommand"]>[0]>().toEqualTypeOf<Schemas["RunCommandRequest"]>();
    expectTypeOf<ReturnType<ExecdClient["fileInfo"]>>().toEqualTypeOf<
      Promise<operations["getFilesInfo"]["responses"][200]["content"]["application/json"]>
    >();
    expectTypeOf<ReturnType<ExecdClient["search"]>>().toEqualTypeOf<Promise<Schemas["FileInfo"][]>>();
    expectTypeOf<ReturnType<ExecdClient["metrics"]>>().toEqualTypeOf<Promise<Schemas["Metrics"]>>();
  });
});
