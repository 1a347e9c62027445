import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PaddockError, Sandbox } from "../../packages/sdk/src/index.js";

describe("control plane files and code", () => {
  let t: TestServer;
  let token: string;
  let id: string;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const raw = body instanceof Uint8Array;
    const response = await fetch(`${t.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined
          ? {}
          : { "content-type": raw ? "application/octet-stream" : "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: raw ? body : JSON.stringify(body) }),
    });
    return response;
  };

  beforeAll(async () => {
    t = await startTestServer();
    token = await t.account("files@example.com");
    id = ((await (await call("POST", "/sandboxes", { template: "python" })).json()) as { id: string }).id;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("write, read (text and binary), move, list, search, delete, mkdir", async () => {
    expect(
      await (
        await call("POST", `/sandboxes/${id}/files/write`, { path: "/work/a.txt", content: "hello\n" })
      ).json(),
    ).toEqual({ path: "/work/a.txt", size: 6 });
    expect(
      await (await call("POST", `/sandboxes/${id}/files/read`, { path: "/work/a.txt" })).json(),
    ).toMatchObject({ content: "hello\n", size: 6 });
    const binary = Buffer.from([0, 255, 1, 254, 10, 13]);
    await call("POST", `/sandboxes/${id}/files/write`, {
      path: "/work/b.bin",
      content: binary.toString("base64"),
      encoding: "base64",
    });
    const back = (await (
      await call("POST", `/sandboxes/${id}/files/read`, { path: "/work/b.bin", encoding: "base64" })
    ).json()) as { content: string };
    expect(Buffer.from(back.content, "base64")).toEqual(binary);

    const big = new Uint8Array(8 * 2 ** 20).map((_, i) => i % 251);
    expect(
      await (await call("POST", `/sandboxes/${id}/files/upload?path=/work/big.bin`, big)).json(),
    ).toEqual({ path: "/work/big.bin", size: big.length });
    const downloaded = new Uint8Array(
      await (await call("GET", `/sandboxes/${id}/files/download?path=/work/big.bin`)).arrayBuffer(),
    );
    expect(downloaded.length).toBe(big.length);
    expect(Buffer.from(downloaded).equals(Buffer.from(big))).toBe(true);
    const ranged = await call("GET", `/sandboxes/${id}/files/download?path=/work/big.bin`, undefined, {
      range: "bytes=10-19",
    });
    expect(ranged.status).toBe(206);
    expect(new Uint8Array(await ranged.arrayBuffer())).toEqual(big.slice(10, 20));

    expect(
      (await call("POST", `/sandboxes/${id}/files/move`, { from: "/work/a.txt", to: "/work/c.md" })).status,
    ).toBe(204);
    const listed = (await (await call("GET", `/sandboxes/${id}/files/list?path=/work`)).json()) as {
      items: Array<{ path: string }>;
    };
    expect(listed.items.map((item) => item.path)).toEqual(["/work/b.bin", "/work/big.bin", "/work/c.md"]);
    const found = (await (
      await call("POST", `/sandboxes/${id}/files/search`, { path: "/work", pattern: "*.md" })
    ).json()) as { items: Array<{ path: string }> };
    expect(found.items.map((item) => item.path)).toEqual(["/work/c.md"]);
    expect((await call("DELETE", `/sandboxes/${id}/files?path=/work/c.md`)).status).toBe(204);
    const missing = await call("POST", `/sandboxes/${id}/files/read`, { path: "/work/c.md" });
    expect([missing.status, ((await missing.json()) as { code: string }).code]).toEqual([
      404,
      "file_not_found",
    ]);
    expect(
      (await call("POST", `/sandboxes/${id}/directories`, { path: "/work/x/y", mode: 700 })).status,
    ).toBe(201);
    const directory = await call("DELETE", `/sandboxes/${id}/files?path=/work/x`);
    expect(directory.status).toBe(400);
    expect(await directory.json()).toMatchObject({
      code: "is_a_directory",
      detail: "/work/x is a directory; pass recursive=true to remove it and everything in it",
    });
    expect((await call("DELETE", `/sandboxes/${id}/files?path=/work/x&recursive=true`)).status).toBe(204);
  });

  test("through the SDK: a relative path is invalid_path, a lone surrogate invalid_unicode, on every call", async () => {
    const sandbox = await Sandbox.connect(id, { baseUrl: t.url, apiKey: token });
    const outcome = async (call: () => Promise<unknown>) => {
      try {
        await call();
        return "done";
      } catch (error) {
        return error instanceof PaddockError ? `${error.status} ${error.code}` : String(error);
      }
    };
    const lone = "/tmp/\ud800";
    const calls: Array<[string, () => Promise<unknown>, string]> = [
      ["read relative", () => sandbox.files.read("relative.txt"), "400 invalid_path"],
      ["write relative", () => sandbox.files.write("relative.txt", "x"), "400 invalid_path"],
      ["list relative", () => sandbox.files.list("work"), "400 invalid_path"],
      ["move to relative", () => sandbox.files.move("/work/a.txt", "a.txt"), "400 invalid_path"],
      ["remove relative", () => sandbox.files.remove("relative.txt"), "400 invalid_path"],
      ["read", () => sandbox.files.read(lone), "400 invalid_unicode"],
      ["read bytes", () => sandbox.files.read(lone, { format: "bytes" }), "400 invalid_unicode"],
      ["write", () => sandbox.files.write(lone, "x"), "400 invalid_unicode"],
      ["list", () => sandbox.files.list(lone), "400 invalid_unicode"],
      ["search", () => sandbox.files.search(lone, "*"), "400 invalid_unicode"],
      ["move", () => sandbox.files.move(lone, "/work/b"), "400 invalid_unicode"],
      ["remove", () => sandbox.files.remove(lone), "400 invalid_unicode"],
      ["makeDir", () => sandbox.files.makeDir(lone), "400 invalid_unicode"],
      ["run", () => sandbox.commands.run("echo \ud800"), "400 invalid_unicode"],
      ["run env", () => sandbox.commands.run("true", { envs: { A: "\udc00" } }), "400 invalid_unicode"],
      [
        "connect",
        () => Sandbox.connect("sbx-\ud800", { baseUrl: t.url, apiKey: token }),
        "400 invalid_request",
      ],
    ];
    const answers = [];
    for (const [name, call] of calls) answers.push([name, await outcome(call)]);
    expect(answers).toEqual(calls.map(([name, , expected]) => [name, expected]));
    // Nothing was written under the replacement character U+FFFD either.
    expect((await sandbox.files.list("/tmp")).map((entry) => entry.path)).not.toContain("/tmp/\ufffd");
  });

  test("code without a context keeps its state per language; a created context starts clean", async () => {
    const run = async (body: Record<string, unknown>) =>
      (await (await call("POST", `/sandboxes/${id}/code`, body)).json()) as Record<string, unknown>;
    expect(await run({ code: "x = 20" })).toMatchObject({ error: null });
    expect(await run({ code: "x + 22" })).toMatchObject({ results: [{ "text/plain": "42" }], error: null });
    expect(await run({ code: "x + 1", language: "python" })).toMatchObject({
      results: [{ "text/plain": "21" }],
    });
    // Each language has its own default context.
    expect(await run({ code: "globalThis.y = 1", language: "javascript" })).toMatchObject({ error: null });
    expect(await run({ code: "y + 41", language: "javascript" })).toMatchObject({
      results: [{ "text/plain": "42" }],
    });
    expect(await run({ code: "y", language: "python" })).toMatchObject({ error: { name: "NameError" } });
    const fresh = (await (
      await call("POST", `/sandboxes/${id}/code/contexts`, { language: "python" })
    ).json()) as { id: string };
    expect(await run({ code: "x", contextId: fresh.id })).toMatchObject({ error: { name: "NameError" } });
  });

  test("stateful code in a context", async () => {
    const context = (await (
      await call("POST", `/sandboxes/${id}/code/contexts`, { language: "python" })
    ).json()) as { id: string };
    const first = (await (
      await call("POST", `/sandboxes/${id}/code`, { code: "n = 41\nprint('ok')", contextId: context.id })
    ).json()) as Record<string, unknown>;
    expect(first).toMatchObject({ stdout: "ok\n", error: null, executionCount: 1 });
    const second = (await (
      await call("POST", `/sandboxes/${id}/code`, { code: "n + 1", contextId: context.id })
    ).json()) as Record<string, unknown>;
    expect(second).toMatchObject({ results: [{ "text/plain": "42" }], executionCount: 2 });
    const failed = (await (
      await call("POST", `/sandboxes/${id}/code`, { code: "1/0", contextId: context.id })
    ).json()) as Record<string, unknown>;
    expect(failed).toMatchObject({ error: { name: "ZeroDivisionError" } });
  });
});
