/**
 * E2B's stock `@e2b/code-interpreter` SDK, from the npm registry and unmodified, against a live
 * Paddock server (real Docker, gVisor): `runCode` and the code contexts, served by execd over its
 * IPython kernels and built-in JavaScript driver through the E2B gateway (port 49999), with only
 * E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY set.
 */
import { type OutputMessage, type Result, Sandbox, TimeoutError } from "@e2b/code-interpreter";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

describe("the stock @e2b/code-interpreter SDK", () => {
  let server: E2bServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    server = await startE2bServer();
    Object.assign(process.env, server.env);
    // The SDK's default template, code-interpreter-v1: Paddock's code-interpreter template.
    sandbox = await Sandbox.create({ timeoutMs: 600_000, envs: { SANDBOX_WIDE: "from create" } });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("the default Python context keeps state between runs, on an IPython kernel", async () => {
    await sandbox.runCode("x = 1");
    const next = await sandbox.runCode("x + 1");
    expect(next.text).toBe("2");
    expect(next.error).toBeUndefined();
    expect(next.executionCount).toBe(2);
    // The same context when Python is named.
    expect((await sandbox.runCode("x * 10", { language: "python" })).text).toBe("10");
    expect((await sandbox.runCode("'get_ipython' in dir()")).text).toBe("True");
    expect((await sandbox.runCode("'hello'")).text).toBe("hello");
  });

  test("onStdout, onStderr, onResult and onError, and the execution's logs", async () => {
    const stdout: OutputMessage[] = [];
    const stderr: OutputMessage[] = [];
    const results: Result[] = [];
    const execution = await sandbox.runCode(
      "import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\ndisplay('shown')\n42",
      {
        onStdout: (line) => {
          stdout.push(line);
        },
        onStderr: (line) => {
          stderr.push(line);
        },
        onResult: (result) => {
          results.push(result);
        },
      },
    );
    expect(stdout.map((line) => line.line).join("")).toBe("to stdout\n");
    expect(stdout[0]?.error).toBe(false);
    expect(stderr.map((line) => line.line).join("")).toBe("to stderr\n");
    expect(stderr[0]?.error).toBe(true);
    expect(execution.logs).toEqual({ stdout: ["to stdout\n"], stderr: ["to stderr\n"] });
    expect(results.map((result) => [result.text, result.isMainResult])).toEqual([
      ["shown", false],
      ["42", true],
    ]);
    expect(execution.results).toHaveLength(2);
    expect(execution.text).toBe("42");

    const errors: unknown[] = [];
    const failed = await sandbox.runCode("def f():\n    return 1 / 0\nf()", {
      onError: (error) => {
        errors.push(error);
      },
    });
    expect(failed.error).toMatchObject({ name: "ZeroDivisionError", value: "division by zero" });
    expect(failed.error?.traceback).toContain("ZeroDivisionError");
    expect(failed.error?.traceback).toContain("return 1 / 0");
    expect(failed.error?.traceback).not.toContain("\u001b[");
    expect(errors).toEqual([failed.error]);
    expect(failed.results).toEqual([]);
  });

  test("rich results: a matplotlib figure as png and chart, a DataFrame as html and data, JSON", async () => {
    const figure = await sandbox.runCode(
      [
        "import matplotlib.pyplot as plt",
        "fig, ax = plt.subplots()",
        "ax.plot([1, 2, 3], [1, 4, 9], label='squares')",
        "ax.set_title('Growth')",
        "ax.set_xlabel('Time (s)')",
        "plt.show()",
      ].join("\n"),
    );
    expect(figure.error).toBeUndefined();
    const image = figure.results[0];
    expect(image?.isMainResult).toBe(false);
    expect(
      Buffer.from(image?.png ?? "", "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    expect(image?.formats()).toEqual(expect.arrayContaining(["png"]));
    expect(image?.chart).toMatchObject({
      type: "line",
      title: "Growth",
      x_label: "Time (s)",
      x_unit: "s",
      x_scale: "linear",
      elements: [
        {
          label: "squares",
          points: [
            [1, 1],
            [2, 4],
            [3, 9],
          ],
        },
      ],
    });

    const bars = await sandbox.runCode(
      "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [3, 5])\nplt.title('Bars')\nplt.show()",
    );
    expect(bars.results[0]?.chart).toMatchObject({
      type: "bar",
      title: "Bars",
      elements: [
        { label: "a", value: 3 },
        { label: "b", value: 5 },
      ],
    });

    const frame = await sandbox.runCode(
      "import pandas as pd\npd.DataFrame({'name': ['ada', 'bob'], 'score': [3.5, None]})",
    );
    const table = frame.results[0];
    expect(table?.isMainResult).toBe(true);
    expect(table?.html).toContain("<table");
    expect(table?.html).toContain("ada");
    expect(table?.data).toEqual({ name: ["ada", "bob"], score: [3.5, null] });

    const json = await sandbox.runCode("{'a': [1, 2], 'b': None}");
    expect(json.results[0]?.json).toEqual({ a: [1, 2], b: null });
    expect(json.text).toBe("{'a': [1, 2], 'b': None}");

    const markdown = await sandbox.runCode(
      "from IPython.display import Markdown, Latex, SVG, HTML, Javascript\n" +
        "display(Markdown('**bold**'), Latex(r'$x^2$'), HTML('<p>hi</p>'), Javascript('1 + 1'))\n" +
        "SVG('<svg xmlns=\"http://www.w3.org/2000/svg\"/>')",
    );
    const [md, latex, html, javascript, svg] = markdown.results;
    expect(md?.markdown).toBe("**bold**");
    expect(latex?.latex).toBe("$x^2$");
    expect(html?.html).toBe("<p>hi</p>");
    expect(javascript?.javascript).toBe("1 + 1");
    expect(svg?.svg).toContain("<svg");
    expect(svg?.isMainResult).toBe(true);
  });

  test("envs hold for one run; the sandbox's own envs reach the kernel", async () => {
    const set = await sandbox.runCode("import os\nos.environ['PER_RUN']", { envs: { PER_RUN: "only now" } });
    expect(set.text).toBe("only now");
    expect((await sandbox.runCode("os.environ.get('PER_RUN', 'gone')")).text).toBe("gone");
    expect((await sandbox.runCode("os.environ.get('SANDBOX_WIDE')")).text).toBe("from create");
  });

  test("code contexts: create, list, run in, restart (state gone), remove", async () => {
    const context = await sandbox.createCodeContext({ cwd: "/tmp" });
    expect(context).toEqual({ id: expect.any(String), language: "python", cwd: "/tmp" });
    await sandbox.runCode("y = 'kept'", { context });
    expect((await sandbox.runCode("import os\n(y, os.getcwd())", { context })).text).toBe("('kept', '/tmp')");
    // Contexts do not share state.
    expect((await sandbox.runCode("'y' in dir()")).text).toBe("False");
    const listed = await sandbox.listCodeContexts();
    expect(listed).toContainEqual(context);
    expect(listed.map((listedContext) => listedContext.language)).toContain("python");

    await sandbox.restartCodeContext(context);
    const after = await sandbox.runCode("y", { context });
    expect(after.error).toMatchObject({ name: "NameError" });
    expect(after.executionCount).toBe(1);
    expect((await sandbox.runCode("import os\nos.getcwd()", { context })).text).toBe("/tmp");

    await sandbox.removeCodeContext(context.id);
    expect((await sandbox.listCodeContexts()).map((listedContext) => listedContext.id)).not.toContain(
      context.id,
    );
    await expect(sandbox.runCode("1", { context })).rejects.toThrow(/no code context/);
  });

  test("JavaScript and TypeScript contexts", async () => {
    await sandbox.runCode("globalThis.total = 40", { language: "javascript" });
    const sum = await sandbox.runCode("console.log('adding'); total + 2", { language: "js" });
    expect(sum.text).toBe("42");
    expect(sum.logs.stdout).toEqual(["adding\n"]);
    const object = await sandbox.runCode("({ ok: true, list: [1, 2] })", { language: "javascript" });
    expect(object.results[0]?.json).toEqual({ ok: true, list: [1, 2] });
    const thrown = await sandbox.runCode("throw new RangeError('too far')", { language: "javascript" });
    expect(thrown.error).toMatchObject({ name: "RangeError", value: "too far" });

    const context = await sandbox.createCodeContext({ language: "typescript" });
    expect(context.language).toBe("typescript");
    const typed = await sandbox.runCode("const n: number = 6;\nn * 7", { context });
    expect(typed.text).toBe("42");
  });

  test("runs sent to one context at once take turns, as in E2B, instead of being refused", async () => {
    const [slow, quick] = await Promise.all([
      sandbox.runCode("import time\ntime.sleep(1)\n'slow'"),
      sandbox.runCode("'quick'"),
    ]);
    expect([slow.text, quick.text, slow.error, quick.error]).toEqual(["slow", "quick", undefined, undefined]);
  });

  test("a run that outlives timeoutMs is interrupted: the context lives on", async () => {
    await sandbox.runCode("survivor = 'still here'");
    await expect(sandbox.runCode("import time\ntime.sleep(60)", { timeoutMs: 2_000 })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    const next = await sandbox.runCode("survivor");
    expect(next.text).toBe("still here");
  });

  test("bad requests are errors, not hangs", async () => {
    await expect(sandbox.runCode("1", { language: "cobol" })).rejects.toThrow(/400/);
    await expect(sandbox.createCodeContext({ cwd: "/no/such/dir" })).rejects.toThrow(/400/);
    await expect(sandbox.removeCodeContext("no-such-context")).rejects.toThrow(/no code context/);
  });
});
