import { existsSync } from "node:fs";
import { EXECD_CODE_INTERPRETER_PREFIX } from "@paddock/common/contracts";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Execd } from "../http/server.js";
import { startExecd } from "../testing.js";

type Line = { type: string } & Record<string, unknown>;

/**
 * The code interpreter's routes on an in-process execd, with the contexts this machine can run
 * (JavaScript, and Python on the built-in driver where there is no ipykernel). Kernels, rich
 * output and E2B's SDK itself are covered end to end in test/e2b/code-interpreter.test.ts.
 */
describe("the code interpreter's /execute and /contexts", () => {
  let execd: Execd;
  let base: string;

  beforeAll(async () => {
    ({ execd, base } = await startExecd());
    base += `${EXECD_CODE_INTERPRETER_PREFIX}`;
  });
  afterAll(() => execd?.close());

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { "X-EXECD-ACCESS-TOKEN": "secret", "content-type": "application/json" },
    });
  const execute = async (body: Record<string, unknown>, signal?: AbortSignal) => {
    const response = await call("/execute", { method: "POST", body: JSON.stringify(body), signal });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await response.text())
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line);
    return {
      lines,
      text: lines.find((line) => line.type === "result" && line.is_main_result)?.text,
      error: lines.find((line) => line.type === "error"),
      stdout: lines.filter((line) => line.type === "stdout").map((line) => line.text),
    };
  };
  const refusal = async (path: string, init: RequestInit) => {
    const response = await call(path, init);
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      text: await response.text(),
    };
  };

  test("a language's default context keeps state; output, results and errors stream as lines", async () => {
    await execute({ code: "globalThis.x = 1", language: "javascript" });
    const next = await execute({ code: "console.log('out'); console.error('err'); x + 1", language: "js" });
    // A driver's output and its replies travel on different pipes: their order is not kept.
    expect(next.lines).toHaveLength(4);
    expect(next.lines).toEqual(
      expect.arrayContaining([
        { type: "number_of_executions", execution_count: 2 },
        { type: "stdout", text: "out\n", timestamp: expect.any(String) },
        { type: "stderr", text: "err\n", timestamp: expect.any(String) },
        { type: "result", text: "2", is_main_result: true },
      ]),
    );
    const object = await execute({ code: "({ a: [1, 2] })", language: "javascript" });
    expect(object.lines.at(-1)).toMatchObject({ type: "result", json: { a: [1, 2] }, is_main_result: true });
    const thrown = await execute({ code: "throw new TypeError('nope')", language: "javascript" });
    expect(thrown.error).toMatchObject({ type: "error", name: "TypeError", value: "nope" });
    expect(thrown.error?.traceback).toContain("TypeError: nope");
    const listed = await (await call("/contexts")).json();
    expect(listed).toContainEqual({
      id: "default-javascript",
      language: "javascript",
      cwd: expect.any(String),
    });
  });

  test("env_vars hold for one run only", async () => {
    const set = await execute({
      code: "process.env.PADDOCK_PROBE",
      language: "javascript",
      env_vars: { PADDOCK_PROBE: "on" },
    });
    expect(set.text).toBe("on");
    const after = await execute({ code: "String(process.env.PADDOCK_PROBE)", language: "javascript" });
    expect(after.text).toBe("undefined");
  });

  test("contexts: create in a directory, list, restart (state gone), remove", async () => {
    const created = await call("/contexts", {
      method: "POST",
      body: JSON.stringify({ language: "javascript", cwd: "/tmp" }),
    });
    const context = (await created.json()) as { id: string; language: string; cwd: string };
    expect(context).toEqual({ id: expect.any(String), language: "javascript", cwd: "/tmp" });
    expect((await execute({ code: "globalThis.kept = 5; process.cwd()", context_id: context.id })).text).toBe(
      "/tmp",
    );
    expect(await (await call("/contexts")).json()).toContainEqual(context);
    expect((await call(`/contexts/${context.id}/restart`, { method: "POST" })).status).toBe(204);
    expect((await execute({ code: "typeof kept", context_id: context.id })).text).toBe("undefined");
    expect((await execute({ code: "process.cwd()", context_id: context.id })).text).toBe("/tmp");
    expect((await call(`/contexts/${context.id}`, { method: "DELETE" })).status).toBe(204);
    const gone = await refusal("/execute", {
      method: "POST",
      body: JSON.stringify({ code: "1", context_id: context.id }),
    });
    expect(gone).toEqual({
      status: 404,
      type: "text/plain; charset=utf-8",
      text: `no code context ${context.id}`,
    });
    expect((await refusal(`/contexts/${context.id}/restart`, { method: "POST" })).status).toBe(404);
    expect((await refusal(`/contexts/${context.id}`, { method: "DELETE" })).status).toBe(404);
  });

  test("a context's runs take turns; a client that leaves interrupts its cell; a removed one ends the queue", async () => {
    const { id } = (await (
      await call("/contexts", { method: "POST", body: JSON.stringify({ language: "javascript" }) })
    ).json()) as {
      id: string;
    };
    const [slow, quick] = await Promise.all([
      execute({ code: "new Promise((resolve) => setTimeout(() => resolve('slow'), 300))", context_id: id }),
      execute({ code: "'quick'", context_id: id }),
    ]);
    expect([slow.text, quick.text]).toEqual(["slow", "quick"]);
    const leaving = new AbortController();
    const looping = execute({ code: "while (true) {}", context_id: id }, leaving.signal).catch(
      (error: Error) => error.name,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    leaving.abort();
    expect(await looping).toBe("AbortError");
    const next = await execute({ code: "'free again'", context_id: id });
    expect(next.text).toBe("free again");
    // A run still waiting for its turn when its context goes is told so in its stream.
    const running = execute({ code: "new Promise(() => {})", context_id: id });
    const waiting = execute({ code: "'never'", context_id: id });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(`/contexts/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await running).error).toMatchObject({ name: "ContextDied" });
    expect((await waiting).lines).toEqual([
      { type: "error", name: "context_not_found", value: `no code context ${id}`, traceback: "" },
    ]);
  });

  test.runIf(existsSync("/usr/bin/python3"))(
    "python without ipykernel: the built-in driver, env_vars included",
    async () => {
      await execute({ code: "x = 1" });
      const next = await execute({
        code: "import os\nprint(os.environ.get('PADDOCK_PROBE'))\n{'x': x + 1}",
        env_vars: { PADDOCK_PROBE: "py" },
      });
      expect(next.stdout).toEqual(["py\n"]);
      expect(next.lines.find((line) => line.type === "result")).toMatchObject({
        text: "{'x': 2}",
        json: { x: 2 },
        is_main_result: true,
      });
      expect(
        (await execute({ code: "os.environ.get('PADDOCK_PROBE', 'unset')", language: "python" })).text,
      ).toBe("unset");
      const failed = await execute({ code: "1 / 0" });
      expect(failed.error).toMatchObject({ name: "ZeroDivisionError", value: "division by zero" });
    },
  );

  test("bad requests are refused in plain text", async () => {
    const post = (path: string, body: unknown) =>
      refusal(path, { method: "POST", body: JSON.stringify(body) });
    expect(await post("/execute", { language: "javascript" })).toMatchObject({
      status: 400,
      text: 'body: missing required property "code"',
    });
    expect((await post("/execute", { code: "1", context_id: "x", language: "python" })).status).toBe(400);
    expect((await post("/execute", { code: "1", language: "cobol" })).text).toBe(
      'body.language: must be one of "python", "javascript", "typescript", "bash"',
    );
    expect((await post("/execute", { code: "1", language: "bash" })).status).toBe(400);
    expect((await post("/execute", { code: "1", language: "javascript", env_vars: { A: 1 } })).status).toBe(
      400,
    );
    expect(
      (await post("/execute", { code: "1", language: "javascript", env_vars: { "A=B": "1" } })).status,
    ).toBe(400);
    expect((await post("/execute", "code")).status).toBe(400);
    expect((await post("/contexts", { language: "bash" })).status).toBe(400);
    expect(await post("/contexts", { language: "javascript", cwd: "/no/such/dir" })).toMatchObject({
      status: 400,
      text: "cwd /no/such/dir is not a directory",
    });
    expect((await refusal("/contexts/x", { method: "GET" })).status).toBe(405);
  });
});
