import { createLogger } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";
import {
  failureLog,
  fuzzOperation,
  loadDocument,
  type Operation,
  operationsOf,
  type Surface,
  unexercised,
} from "../support/openapi-fuzz.js";

// Every operation of E2B's API document, as Paddock serves it under /e2b, fuzzed from it.
const document = loadDocument(new URL("../../../shared/specs/e2b/openapi.yml", import.meta.url).pathname);
const operations = operationsOf(document);

/** Operations that end, stop, copy or cut off the live sandbox: they get only throwaway ids. */
const destructive = (operation: Operation) =>
  operation.method === "DELETE" ||
  /\/(pause|resume|fork|connect|timeout|refreshes|network|snapshots|kill|cancel)$/.test(operation.path);

describe("/e2b: every operation of E2B's openapi.yml under generated input", () => {
  let server: E2bServer;
  let sandboxId: string;
  const log = failureLog();
  const exercised = new Set<string>();
  let cases = 0;
  let known: Record<string, string[]> = {};

  const surface: Surface = {
    document,
    base: () => server.env.E2B_API_URL,
    context: () => ({ credentials: { "X-API-Key": server.env.E2B_API_KEY }, known }),
    // E2B's {code: <status>, message}.
    errorShape: (body) => {
      const error = body as { code?: unknown; message?: unknown } | undefined;
      return typeof error?.code === "number" && typeof error.message === "string";
    },
    async alive() {
      expect((await fetch(`${server.t.url}/health`)).status).toBe(200);
      const sandbox = await fetch(`${server.env.E2B_API_URL}/sandboxes/${sandboxId}`, {
        headers: { "X-API-Key": server.env.E2B_API_KEY },
      });
      expect(sandbox.status).toBe(200);
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
    sandboxId = ((await created.json()) as { sandboxID: string }).sandboxID;
    log.take();
  });
  afterAll(async () => {
    await server?.dispose();
    console.log(`/e2b: ${exercised.size} operations, ${cases} cases`);
  });

  test.each(operations.map((operation) => [operation.id, operation] as const))(
    "%s",
    async (_id, operation) => {
      known = destructive(operation)
        ? { templateID: ["base"] }
        : { sandboxID: [sandboxId], templateID: ["base"], alias: ["base"] };
      cases += await fuzzOperation(surface, operation);
      exercised.add(operation.id);
    },
    120_000,
  );

  test("every operation in the document was fuzzed", () => {
    expect(operations.length).toBeGreaterThan(40);
    expect(unexercised(operations, exercised)).toEqual([]);
  });
});
