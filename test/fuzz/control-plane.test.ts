import { createLogger } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { fuzzEveryOperation } from "../support/fuzz-suite.js";
import {
  failureLog,
  loadDocument,
  type Operation,
  operationsOf,
  type Surface,
} from "../support/openapi-fuzz.js";

// Every operation of the committed control-plane OpenAPI document, fuzzed from its definition.
const document = loadDocument(new URL("../../openapi/control-plane.json", import.meta.url).pathname);
const operations = operationsOf(document);

/** Operations that end or change what the other runs rely on: run with a throwaway account. */
const destructive = (operation: Operation) =>
  operation.method === "DELETE" || /\/(pause|resume|logout|rotate|cancel)$/.test(operation.path);

/** 5xx answers that name a real failure of this server's configuration, not of the request. */
const configurationFailures = new Set([
  "billing_not_configured",
  "billing_provider_unavailable",
  "payment_provider_unavailable",
]);

describe("control plane: every operation of openapi/control-plane.json under generated input", () => {
  let t: TestServer;
  let token: string;
  let sandboxId: string;
  const log = failureLog();
  let credentials: Record<string, string> = {};
  let throwaways = 0;

  const surface: Surface = {
    document,
    base: () => t.url,
    context: () => ({
      credentials,
      known: { id: [sandboxId], path: ["/tmp/fuzz", "/tmp"], template: ["ubuntu"], port: ["8080"] },
    }),
    errorShape: (body) => {
      const error = body as { code?: unknown; detail?: unknown } | undefined;
      return typeof error?.code === "string" && typeof error.detail === "string";
    },
    allowedServerError: (_operation, _status, body) =>
      configurationFailures.has(String((body as { code?: unknown } | undefined)?.code)),
    async alive() {
      expect((await fetch(`${t.url}/health`)).status).toBe(200);
      const sandbox = await fetch(`${t.url}/sandboxes/${sandboxId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(sandbox.status).toBe(200);
    },
    failures: () => log.take(),
  };

  beforeAll(async () => {
    t = await startTestServer({
      logger: createLogger({ level: "error", name: "fuzz", destination: log.destination }),
    });
    token = await t.account("fuzz-control-plane@example.com");
    const created = await fetch(`${t.url}/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: '{"template":"ubuntu"}',
    });
    sandboxId = ((await created.json()) as { id: string }).id;
    log.take();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  fuzzEveryOperation("control plane", operations, surface, {
    atLeast: 50,
    before: async (operation) => {
      credentials = {
        authorization: `Bearer ${destructive(operation) ? await t.account(`throwaway-${throwaways++}@example.com`) : token}`,
      };
    },
  });

  // Found by the deep runs (PADDOCK_FUZZ_RUNS=150), kept here for every run.
  test("a template build without a body is a 400, not a 500", async () => {
    const response = await fetch(`${t.url}/templates/no-body/builds`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect([response.status, ((await response.json()) as { code: string }).code]).toEqual([
      400,
      "invalid_request",
    ]);
    expect(log.take()).toEqual([]);
  });
});
