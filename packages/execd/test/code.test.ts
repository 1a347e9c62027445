import { describe, expect, test } from "vitest";
import { type ExecdClient, sandboxPerSuite } from "./client.js";

describe.each(["gvisor", "runc"] as const)("stateful code under %s", (secure) => {
  let execd: ExecdClient;
  sandboxPerSuite(secure, { image: { uri: "paddock/template-python:latest" } }, (made) => {
    execd = made;
  });

  const run = async (id: string, code: string) => {
    const events = await execd.events("/code", { context: { id }, code });
    const stdout = events
      .filter((event) => event.type === "stdout")
      .map((event) => event.text)
      .join("");
    return {
      events,
      stdout,
      last: events.at(-1),
      results: events.filter((event) => event.type === "result"),
    };
  };

  test("python keeps state within a context and never across contexts", async () => {
    const a = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "python" }),
    });
    const b = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "python" }),
    });
    const first = await run(a.id, "x = 40\nprint('set')");
    expect(first.stdout).toBe("set\n");
    expect(first.events.find((event) => event.type === "execution_count")).toMatchObject({
      execution_count: 1,
    });
    expect(first.last).toMatchObject({ type: "execution_complete" });
    const second = await run(a.id, "x + 2");
    expect(second.results[0]).toMatchObject({ results: { "text/plain": "42" } });
    expect(second.events.find((event) => event.type === "execution_count")).toMatchObject({
      execution_count: 2,
    });
    const other = await run(b.id, "x");
    const error = other.events.find((event) => event.type === "error");
    expect(error).toMatchObject({ error: { ename: "NameError" } });
    expect((error?.error as { traceback: string[] } | undefined)?.traceback.join("\n")).toContain(
      "NameError",
    );
    const listed = await execd.json("/code/contexts?language=python");
    expect(listed.map((context: { id: string }) => context.id).sort()).toEqual([a.id, b.id].sort());
    expect((await execd.fetch(`/code/contexts/${b.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await execd.fetch(`/code/contexts/${b.id}`)).status).toBe(404);
  });

  test("the python template has no ipykernel: the built-in driver runs its cells", async () => {
    const { id } = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "python" }),
    });
    const probe = await run(
      id,
      "import sys\n('ipykernel' in sys.modules, 'get_ipython' in dir(__builtins__))",
    );
    expect(probe.results[0]).toMatchObject({ results: { "text/plain": "(False, False)" } });
    expect(probe.last).toMatchObject({ type: "execution_complete" });
  });

  test("rich results: JSON-able values and HTML reprs", async () => {
    const { id } = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "python" }),
    });
    const json = await run(id, "{'a': [1, 2]}");
    expect(json.results[0]).toMatchObject({ results: { "application/json": { a: [1, 2] } } });
    const html = await run(
      id,
      "class Table:\n    def _repr_html_(self):\n        return '<b>hi</b>'\nTable()",
    );
    expect(html.results[0]).toMatchObject({ results: { "text/html": "<b>hi</b>" } });
  });

  test("an interrupt stops a running cell and keeps the context", async () => {
    const { id } = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "python" }),
    });
    await run(id, "kept = 'still here'");
    const running = run(id, "import time\nwhile True: time.sleep(0.05)");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await execd.fetch(`/code?id=${id}`, { method: "DELETE" })).status).toBe(200);
    const interrupted = await running;
    expect(interrupted.events.find((event) => event.type === "error")).toMatchObject({
      error: { ename: "KeyboardInterrupt" },
    });
    expect((await run(id, "kept")).results[0]).toMatchObject({ results: { "text/plain": "'still here'" } });
  });

  test("javascript contexts keep state and report errors", async () => {
    const { id } = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "javascript" }),
    });
    await run(id, "globalThis.total = 20; console.log('ready')");
    const sum = await run(id, "total + 22");
    expect(sum.results[0]).toMatchObject({ results: { "text/plain": "42" } });
    const awaited = await run(id, "Promise.resolve({ ok: true })");
    expect(awaited.results[0]).toMatchObject({ results: { "application/json": { ok: true } } });
    const thrown = await run(id, "throw new TypeError('nope')");
    expect(thrown.events.find((event) => event.type === "error")).toMatchObject({
      error: { ename: "TypeError", evalue: "nope" },
    });
    const looping = run(id, "while (true) {}");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await execd.fetch(`/code?id=${id}`, { method: "DELETE" });
    expect((await looping).events.find((event) => event.type === "error")).toBeDefined();
    expect((await run(id, "total")).results[0]).toMatchObject({ results: { "text/plain": "20" } });
  });

  test("typescript contexts strip types and keep state", async () => {
    const { id } = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "typescript" }),
    });
    await run(
      id,
      "interface Point { x: number; y: number }\nconst origin: Point = { x: 3, y: 4 };\nglobalThis.p = origin;",
    );
    const length = await run(id, "Math.hypot((p as { x: number }).x, p.y)");
    expect(length.results[0]).toMatchObject({ results: { "text/plain": "5" } });
    expect(length.events.some((event) => event.type === "stderr")).toBe(false);
  });

  test("bash contexts are sessions; unknown languages and contexts are refused", async () => {
    const { id } = await execd.json("/code/context", {
      method: "POST",
      body: JSON.stringify({ language: "bash" }),
    });
    await run(id, "export COLOR=green");
    expect((await run(id, "echo $COLOR")).stdout).toBe("green\n");
    expect(
      (await execd.fetch("/code/context", { method: "POST", body: JSON.stringify({ language: "cobol" }) }))
        .status,
    ).toBe(400);
    expect(
      (
        await execd.fetch("/code", {
          method: "POST",
          body: JSON.stringify({ context: { id: "nope" }, code: "1" }),
        })
      ).status,
    ).toBe(404);
    expect(
      (await execd.fetch("/code", { method: "POST", body: JSON.stringify({ context: { id } }) })).status,
    ).toBe(400);
  });

  test("context id `default` runs in the language's default context, kept until deleted", async () => {
    const inDefault = (code: string, language: string) =>
      execd.events("/code", { context: { id: "default", language }, code });
    const resultOf = (events: Array<Record<string, unknown>>) =>
      (events.find((event) => event.type === "result")?.results as Record<string, unknown> | undefined)?.[
        "text/plain"
      ];
    // Two first runs at once share one start: either may run first; the other runs after it or
    // finds the context busy (409).
    const firsts = await Promise.allSettled([inDefault("a = 1", "python"), inDefault("b = 2", "python")]);
    const ran = ["a", "b"].filter((_, index) => firsts[index]?.status === "fulfilled");
    expect(ran.length).toBeGreaterThan(0);
    for (const first of firsts)
      if (first.status === "rejected") expect(String(first.reason)).toMatch(/409.*context_busy/);
    expect(resultOf(await inDefault("[n for n in ('a', 'b') if n in globals()]", "python"))).toBe(
      `[${ran.map((name) => `'${name}'`).join(", ")}]`,
    );
    expect(await inDefault("x = 20", "python3")).toContainEqual(
      expect.objectContaining({ type: "execution_complete" }),
    );
    expect(resultOf(await inDefault("x + 22", "python"))).toBe("42");
    const listed = (await execd.json("/code/contexts?language=python")) as Array<{ id: string }>;
    expect(listed.filter((context) => context.id.startsWith("default"))).toEqual([
      { id: "default-python", language: "python" },
    ]);
    expect(resultOf(await inDefault("x + 1", "python"))).toBe("21");
    expect((await execd.fetch("/code/contexts/default-python", { method: "DELETE" })).status).toBe(200);
    const reset = await inDefault("x", "python");
    expect(reset.find((event) => event.type === "error")).toMatchObject({ error: { ename: "NameError" } });
    // Without a context id a run stays stateless, as the wire spec shows.
    const stateless = await execd.events("/code", { context: { language: "python" }, code: "x = 5" });
    expect(stateless.at(-1)).toMatchObject({ type: "execution_complete" });
    expect(resultOf(await inDefault("'x' in globals()", "python"))).toBe("False");
  });
});
