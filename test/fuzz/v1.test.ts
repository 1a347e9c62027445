import { createLogger } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { fuzzEveryOperation } from "../support/fuzz-suite.js";
import {
  failureLog,
  loadDocument,
  type Operation,
  operationsOf,
  type Surface,
} from "../support/openapi-fuzz.js";

// Every operation of OpenSandbox's lifecycle API, served by Paddock under /v1, fuzzed from it.
const document = loadDocument(
  new URL("../../../shared/specs/opensandbox/sandbox-lifecycle.yml", import.meta.url).pathname,
);
const operations = operationsOf(document);

/** Operations that end, stop or copy the live sandbox: they get only throwaway ids. */
const destructive = (operation: Operation) =>
  operation.method === "DELETE" || /\/(pause|resume|snapshots)$/.test(operation.path);

describe("/v1: every operation of sandbox-lifecycle.yml under generated input", () => {
  let t: TestServer;
  let sandboxId: string;
  const log = failureLog();
  let known: Record<string, string[]> = {};

  const surface: Surface = {
    document,
    base: () => `${t.url}/v1`,
    context: () => ({ credentials: { "OPEN-SANDBOX-API-KEY": t.apiKey }, known }),
    errorShape: (body) => {
      const error = body as { code?: unknown; message?: unknown } | undefined;
      return typeof error?.code === "string" && typeof error.message === "string";
    },
    async alive() {
      expect((await fetch(`${t.url}/health`)).status).toBe(200);
      expect((await t.api(`/v1/sandboxes/${sandboxId}`)).status).toBe(200);
    },
    failures: () => log.take(),
  };

  beforeAll(async () => {
    t = await startTestServer({
      logger: createLogger({ level: "error", name: "fuzz", destination: log.destination }),
    });
    const created = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({ image: { uri: "paddock/base:bookworm" }, entrypoint: ["sleep", "infinity"] }),
    });
    sandboxId = ((await created.json()) as { id: string }).id;
    log.take();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  fuzzEveryOperation("/v1", operations, surface, {
    atLeast: 10,
    before: (operation) => {
      known = destructive(operation)
        ? { uri: ["paddock/base:bookworm"] }
        : { sandboxId: [sandboxId], port: ["44772", "8080"], uri: ["paddock/base:bookworm"] };
    },
  });
});
