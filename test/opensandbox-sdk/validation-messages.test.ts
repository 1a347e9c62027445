/**
 * The published OpenSandbox SDK shows what execd refuses, naming the field: its exceptions carry
 * execd's message, which names the part of the request, the JSON path and the property.
 */
import { ConnectionConfig, Sandbox, SandboxApiException } from "@alibaba-group/opensandbox";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

let t: TestServer;
let sandbox: Sandbox;

beforeAll(async () => {
  t = await startTestServer();
  const connectionConfig = new ConnectionConfig({
    domain: t.url,
    apiKey: t.apiKey,
    requestTimeoutSeconds: 60,
  });
  sandbox = await Sandbox.create({
    connectionConfig,
    image: { uri: "paddock/base:bookworm" },
    entrypoint: ["sleep", "infinity"],
    timeoutSeconds: 600,
  });
});
afterAll(async () => {
  await sandbox?.kill().catch(() => undefined);
  await t?.dispose();
});

describe("execd's refusals through the OpenSandbox SDK", () => {
  const refusal = (call: () => Promise<unknown>) =>
    call().then(
      () => undefined,
      (error: unknown) => error,
    );

  test.each([
    [
      "file info of a relative path",
      () => sandbox.files.getFileInfo(["notes.txt"]),
      'query.path: must be an absolute path (starting with /), not "notes.txt"',
    ],
    [
      "a move to a relative path",
      () => sandbox.files.moveFiles([{ src: "/tmp/a", dest: "b" }]),
      'body[0].dest: must be an absolute path (starting with /), not "b"',
    ],
    [
      "a listing of depth 0",
      () => sandbox.files.listDirectory({ path: "/tmp", depth: 0 }),
      "query.depth: must be integer >= 1",
    ],
  ])("%s", async (_name, call, message) => {
    const error = await refusal(call);
    expect(error).toBeInstanceOf(SandboxApiException);
    expect(error).toMatchObject({ statusCode: 400, message });
  });
});
