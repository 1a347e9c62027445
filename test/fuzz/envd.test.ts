import { Agent } from "node:http";
import { createLogger } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";
import { fuzzEveryOperation } from "../support/fuzz-suite.js";
import {
  failureLog,
  loadDocument,
  type Operation,
  operationsOf,
  type Surface,
  send,
} from "../support/openapi-fuzz.js";
import { protoOperations } from "../support/proto-operations.js";

// E2B's envd, as Paddock serves it through the /e2b gateway to a live sandbox: the plain HTTP
// routes of envd.yaml and the Connect RPCs of its process and filesystem services (JSON over POST).
const specs = new URL("../../../shared/specs/e2b/envd/", import.meta.url).pathname;
const document = loadDocument(`${specs}envd.yaml`);
const operations: Operation[] = [
  ...operationsOf(document),
  ...protoOperations(`${specs}process/process.proto`),
  ...protoOperations(`${specs}filesystem/filesystem.proto`),
];

/** Calls that would freeze, or stop the processes of, the sandbox every other run uses. */
const destructive = (operation: Operation) =>
  /^\/(freeze|unfreeze|collapse|fsfreeze|fsthaw)$/.test(operation.path);

describe("envd: every operation of envd.yaml and its Connect services under generated input", () => {
  let server: E2bServer;
  let sandboxId: string;
  let accessToken: string;
  const log = failureLog();
  let credentials: Record<string, string> = {};

  const surface: Surface = {
    document,
    base: () => server.env.E2B_SANDBOX_URL,
    context: () => ({
      credentials,
      fixedHeaders: { "E2b-Sandbox-Id": sandboxId },
      known: { path: ["/tmp/fuzz", "/tmp", "/home/user"], cmd: ["true", "/bin/echo"], cwd: ["/tmp"] },
    }),
    // envd's routes answer E2B's {code: <status>, message}; its Connect RPCs {code: "<name>", message}.
    errorShape: (body) => {
      const error = body as { code?: unknown; message?: unknown } | undefined;
      return ["number", "string"].includes(typeof error?.code) && typeof error?.message === "string";
    },
    async alive() {
      expect((await fetch(`${server.t.url}/health`)).status).toBe(200);
      // Listing processes is not metered: the runs may have spent the sandbox's rate of file calls.
      const list = await fetch(`${server.env.E2B_SANDBOX_URL}/process.Process/List`, {
        method: "POST",
        headers: {
          "E2b-Sandbox-Id": sandboxId,
          "X-Access-Token": accessToken,
          "content-type": "application/json",
        },
        body: "{}",
      });
      expect(list.status).toBe(200);
    },
    failures: () => log.take(),
  };

  beforeAll(async () => {
    server = await startE2bServer({
      logger: createLogger({ level: "error", name: "fuzz", destination: log.destination }),
    });
    const created = await fetch(`${server.env.E2B_API_URL}/sandboxes`, {
      method: "POST",
      headers: { "x-api-key": server.env.E2B_API_KEY, "content-type": "application/json" },
      body: JSON.stringify({ templateID: "base", timeout: 600 }),
    });
    const sandbox = (await created.json()) as { sandboxID: string; envdAccessToken: string };
    sandboxId = sandbox.sandboxID;
    accessToken = sandbox.envdAccessToken;
    log.take();
  });
  afterAll(async () => {
    await server?.dispose();
  });

  // First, while the sandbox's rate of file calls is untouched by the runs below.
  test("a large body refused before it is read leaves the keep-alive connection usable", async () => {
    const headers = { "E2b-Sandbox-Id": sandboxId, "X-Access-Token": accessToken };
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const stat = {
      method: "POST",
      target: "/filesystem.Filesystem/Stat",
      headers: { ...headers, "content-type": "application/json" },
      body: Buffer.from('{"path":"/tmp"}'),
      note: "a call on the connection",
      agent,
    };
    // The connection is open and the gateway's route to the sandbox known: the refusal is quick.
    expect((await send(server.env.E2B_SANDBOX_URL, stat)).status).toBe(200);
    for (const size of [1024, 1024 * 1024]) {
      const refused = await send(server.env.E2B_SANDBOX_URL, {
        method: "POST",
        target: "/process.Process/Start",
        headers: { ...headers, "content-type": "text/plain" },
        body: Buffer.alloc(size, "x"),
        note: `${size} bytes in a content type not served`,
        agent,
      });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect((await send(server.env.E2B_SANDBOX_URL, stat)).status).toBe(200);
    }
    agent.destroy();
  });

  // Found by the deep runs (PADDOCK_FUZZ_RUNS=150), kept here for every run.
  test("a move across file systems is the caller's failed_precondition, not a 500", async () => {
    const moved = await fetch(`${server.env.E2B_SANDBOX_URL}/filesystem.Filesystem/Move`, {
      method: "POST",
      headers: {
        "E2b-Sandbox-Id": sandboxId,
        "X-Access-Token": accessToken,
        "content-type": "application/json",
      },
      body: JSON.stringify({ source: "/proc/self/environ", destination: "/tmp/environ" }),
    });
    expect([moved.status, ((await moved.json()) as { code: string }).code]).toEqual([
      400,
      "failed_precondition",
    ]);
  });

  fuzzEveryOperation("envd", operations, surface, {
    atLeast: 25,
    before: (operation) => {
      credentials = { "X-Access-Token": destructive(operation) ? `${accessToken}-not` : accessToken };
    },
  });
});
