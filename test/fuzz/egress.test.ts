import { createLogger, EGRESS_PORT } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { fuzzEveryOperation } from "../support/fuzz-suite.js";
import { failureLog, loadDocument, operationsOf, type Surface } from "../support/openapi-fuzz.js";

// Every operation of the egress sidecar's API, fuzzed from its definition against the sidecar of
// a live sandbox created with a network policy, reached with the sandbox's egress token.
const document = loadDocument(
  new URL("../../../shared/specs/opensandbox/egress-api.yaml", import.meta.url).pathname,
);
const operations = operationsOf(document);

describe("egress: every operation of egress-api.yaml under generated input", () => {
  let t: TestServer;
  let sandboxId: string;
  let egressUrl: string;
  let token: Record<string, string>;
  const log = failureLog();

  const surface: Surface = {
    document,
    base: () => egressUrl,
    context: () => ({ credentials: token, known: { target: ["example.com", "10.0.0.0/8"] } }),
    errorShape: (body) => {
      const error = body as { code?: unknown; message?: unknown } | undefined;
      return typeof error?.code === "string" && typeof error.message === "string";
    },
    async alive() {
      expect((await fetch(`${t.url}/health`)).status).toBe(200);
      expect((await fetch(`${egressUrl}/policy`, { headers: token })).status).toBe(200);
    },
    failures: () => log.take(),
  };

  beforeAll(async () => {
    t = await startTestServer({
      logger: createLogger({ level: "error", name: "fuzz", destination: log.destination }),
    });
    const created = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({
        image: { uri: "paddock/base:bookworm" },
        entrypoint: ["sleep", "infinity"],
        networkPolicy: { defaultAction: "deny", egress: [{ action: "allow", target: "example.com" }] },
      }),
    });
    sandboxId = ((await created.json()) as { id: string }).id;
    const resolved = await t.api(`/v1/sandboxes/${sandboxId}/endpoints/${EGRESS_PORT}`);
    const endpoint = (await resolved.json()) as { endpoint: string; headers: Record<string, string> };
    egressUrl = `http://${endpoint.endpoint}`;
    token = endpoint.headers;
    log.take();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  fuzzEveryOperation("egress", operations, surface, { atLeast: 5 });
});
