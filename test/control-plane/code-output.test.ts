import { startTestServer, type TestServer } from "@paddock/server/testing";
import { Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const eightMiB = 8 * 2 ** 20;

/** `/code`'s buffered answer is bounded as `/run`'s is: 8 MiB of stdout, of stderr and of results. */
describe("a code cell's output through the SDK", () => {
  let t: TestServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer();
    await Paddock.signup("cells@example.com", "correct horse battery", { baseUrl: t.url });
    const { client } = await Paddock.login("cells@example.com", "correct horse battery", { baseUrl: t.url });
    const apiKey = (await client.keys.create({ name: "cells" })).secret;
    sandbox = await Sandbox.create({ baseUrl: t.url, apiKey, template: "python", timeoutSeconds: 600 });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("a cell that prints more than 8 MiB keeps the first 8 MiB and says it was truncated", async () => {
    const cell = await sandbox.runCode("import sys\nfor _ in range(160): sys.stdout.write('x' * 65536)\n");
    expect(cell.stdout.length).toBe(eightMiB);
    expect(cell.stdout).toMatch(/^x+$/);
    expect(cell.truncated).toBe(true);
    expect(cell.error).toBeNull();
  });

  test("a cell whose value is more than 8 MiB gets no result past the bound, and says so", async () => {
    const cell = await sandbox.runCode("'y' * (10 * 2**20)");
    expect(JSON.stringify(cell.results).length).toBeLessThanOrEqual(eightMiB);
    expect(cell.truncated).toBe(true);
    expect(cell.error).toBeNull();
    // The context goes on as before, and a small value is answered whole.
    const next = await sandbox.runCode("2 + 40");
    expect(next.results[0]).toMatchObject({ "text/plain": "42" });
    expect(next.truncated).toBeUndefined();
  });
});
