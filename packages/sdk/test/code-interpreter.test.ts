import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Paddock, Sandbox } from "../src/index.js";

/** The code-interpreter template through the public API: its Python contexts run on IPython. */
describe("the SDK's stateful code on the code-interpreter template", () => {
  let t: TestServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer();
    await Paddock.signup("kernel@example.com", "correct horse battery", { baseUrl: t.url });
    const { client } = await Paddock.login("kernel@example.com", "correct horse battery", {
      baseUrl: t.url,
    });
    const apiKey = (await client.keys.create({ name: "kernel" })).secret;
    sandbox = await Sandbox.create({
      baseUrl: t.url,
      apiKey,
      template: "code-interpreter",
      timeoutSeconds: 600,
    });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("state, execution counts, figures as PNG, frames as HTML, tracebacks", async () => {
    const context = await sandbox.createCodeContext("python");
    const first = await sandbox.runCode(
      "import pandas as pd\nframe = pd.DataFrame({'a': [1, 2]})\nprint('ok')",
      {
        context: context.id,
      },
    );
    expect(first).toMatchObject({ stdout: "ok\n", error: null, executionCount: 1 });
    const html = await sandbox.runCode("frame", { context: context.id });
    expect(html.executionCount).toBe(2);
    expect(String(html.results[0]?.["text/html"])).toContain("<table");
    const plot = await sandbox.runCode("import matplotlib.pyplot as plt\nplt.plot([1, 4, 9]);", {
      context: context.id,
    });
    const png = Buffer.from(
      String(plot.results.find((result) => result["image/png"])?.["image/png"]),
      "base64",
    );
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    const failed = await sandbox.runCode("frame['missing']", { context: context.id });
    expect(failed.error?.name).toBe("KeyError");
    expect(failed.error?.traceback.join("\n")).toContain("missing");
  });

  test("runs without a context share the language's default context; a new context starts clean", async () => {
    await sandbox.runCode("x = 20");
    expect((await sandbox.runCode("x + 22")).results[0]).toMatchObject({ "text/plain": "42" });
    const fresh = await sandbox.createCodeContext("python");
    const result = await sandbox.runCode("'x' in dir()", { context: fresh.id });
    expect(result.results[0]).toMatchObject({ "text/plain": "False" });
  });
});
