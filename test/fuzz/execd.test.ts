import { createLogger, EXECD_PORT, EXECD_TOKEN_HEADER } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { fuzzEveryOperation } from "../support/fuzz-suite.js";
import { failureLog, loadDocument, operationsOf, type Surface } from "../support/openapi-fuzz.js";

// Every operation of OpenSandbox's execd API, fuzzed from its definition against the execd of a
// live sandbox, reached directly with the sandbox's execd token (as the server's proxy reaches it).
const document = loadDocument(
  new URL("../../../shared/specs/opensandbox/execd-api.yaml", import.meta.url).pathname,
);
const operations = operationsOf(document);

describe("execd: every operation of execd-api.yaml under generated input", () => {
  let t: TestServer;
  let sandboxId: string;
  let execdUrl: string;
  let token: string;
  const log = failureLog();

  const surface: Surface = {
    document,
    base: () => execdUrl,
    context: () => ({
      credentials: { [EXECD_TOKEN_HEADER]: token },
      known: { path: ["/tmp/fuzz", "/tmp"], cwd: ["/tmp"], language: ["python", "bash"] },
    }),
    errorShape: (body) => {
      const error = body as { code?: unknown; message?: unknown } | undefined;
      return typeof error?.code === "string" && typeof error.message === "string";
    },
    // A template without Python answers a code context with 501 language_unavailable (the registry's);
    // hundreds of runs' sessions and commands fill the sandbox's process limit, which execd answers
    // with the registry's 503s once no process can be spawned (EAGAIN).
    allowedServerError: (_operation, status, body) => {
      const error = body as { code?: unknown; message?: unknown } | undefined;
      if (status === 501) return error?.code === "language_unavailable";
      return (
        status === 503 &&
        ["cannot_start_process", "isolation_unavailable"].includes(String(error?.code)) &&
        String(error?.message).includes("EAGAIN")
      );
    },
    async alive() {
      expect((await fetch(`${t.url}/health`)).status).toBe(200);
      const ping = await fetch(`${execdUrl}/ping`, { headers: { [EXECD_TOKEN_HEADER]: token } });
      expect(ping.status).toBe(200);
      const info = await fetch(`${execdUrl}/files/info?path=/etc/hostname`, {
        headers: { [EXECD_TOKEN_HEADER]: token },
      });
      expect(info.status).toBe(200);
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
    const target = await t.server.stack.sandboxes.target(sandboxId, EXECD_PORT);
    execdUrl = `http://${target.host}:${target.port}`;
    token = t.server.stack.sandboxes.tokens(sandboxId).execd;
    log.take();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  fuzzEveryOperation("execd", operations, surface, { atLeast: 20 });
});
