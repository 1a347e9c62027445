import { createLogger } from "@paddock/common";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";
import { fuzzEveryOperation } from "../support/fuzz-suite.js";
import {
  failureLog,
  loadDocument,
  type Operation,
  operationsOf,
  type Surface,
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
  });

  fuzzEveryOperation("/e2b", operations, surface, {
    atLeast: 40,
    before: (operation) => {
      known = destructive(operation)
        ? { templateID: ["base"] }
        : { sandboxID: [sandboxId], templateID: ["base"], alias: ["base"] };
    },
  });
});
