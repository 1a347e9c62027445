import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { maxTextBytes } from "../src/index.js";

const password = "correct horse battery";

/** An MCP client of the server's /mcp with a credential, as any MCP client connects. */
async function mcpClient(url: string, apiKey: string): Promise<Client> {
  const client = new Client({ name: "paddock-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  return client;
}

/** The text of a tool result's text blocks. */
function textOf(result: unknown): string {
  return (result as CallToolResult).content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
}

const sandboxTools = [
  "create_sandbox",
  "list_sandboxes",
  "kill_sandbox",
  "run_command",
  "run_code",
  "read_file",
  "write_file",
  "list_directory",
  "get_endpoint",
  "list_templates",
];

describe("Paddock over MCP's Streamable HTTP at /mcp", () => {
  let t: TestServer;
  let apiKey: string;
  let memoryKey: string;
  let strangerKey: string;
  let mcp: Client;
  let sandboxId: string;

  beforeAll(async () => {
    t = await startTestServer();
    const account = async (email: string) => {
      await Paddock.signup(email, password, { baseUrl: t.url });
      return (await Paddock.login(email, password, { baseUrl: t.url })).client;
    };
    const owner = await account("mcp-owner@example.com");
    apiKey = (await owner.keys.create({ name: "agent" })).secret;
    memoryKey = (await owner.keys.create({ name: "notes", scope: "memory" })).secret;
    strangerKey = (await (await account("mcp-stranger@example.com")).keys.create({ name: "x" })).secret;
    mcp = await mcpClient(t.url, apiKey);
  });
  afterAll(async () => {
    await mcp?.close();
    await t?.dispose();
  });

  test("lists every tool, each with a description and described fields", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...sandboxTools].sort());
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(20);
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      for (const [field, schema] of Object.entries(properties))
        expect(schema.description, `${tool.name}.${field}`).toBeTruthy();
    }
  });

  test("creates a python sandbox, runs a command and code in it, writes and reads a file, lists, gets an endpoint", async () => {
    const created = await mcp.callTool({
      name: "create_sandbox",
      arguments: { template: "python", timeoutSeconds: 600, env: { COLOUR: "teal" } },
    });
    expect(created.isError).toBeFalsy();
    sandboxId = /Created sandbox (\S+) /.exec(textOf(created))?.[1] ?? "";
    // The sandbox is the account's, made through the real API.
    expect((await Sandbox.connect(sandboxId, { baseUrl: t.url, apiKey })).state).toBe("Running");

    const command = await mcp.callTool({
      name: "run_command",
      arguments: {
        sandboxId,
        command: 'echo "$COLOUR $EXTRA $(pwd)"; echo oops >&2; exit 3',
        cwd: "/tmp",
        env: { EXTRA: "x" },
      },
    });
    expect(command.isError).toBeFalsy();
    expect(textOf(command)).toBe("exit code: 3\nstdout:\nteal x /tmp\n\nstderr:\noops\n");

    const code = await mcp.callTool({
      name: "run_code",
      arguments: { sandboxId, code: "x = 20\nprint('hello')\nx + 22", language: "python" },
    });
    expect(textOf(code)).toContain("stdout:\nhello");
    expect(textOf(code)).toContain("42");
    const failing = await mcp.callTool({ name: "run_code", arguments: { sandboxId, code: "1 / 0" } });
    expect(textOf(failing)).toContain("error: ZeroDivisionError");

    const written = await mcp.callTool({
      name: "write_file",
      arguments: { sandboxId, path: "/tmp/mcp/notes.txt", content: "première ligne\n" },
    });
    expect(written.isError).toBeFalsy();
    const read = await mcp.callTool({
      name: "read_file",
      arguments: { sandboxId, path: "/tmp/mcp/notes.txt" },
    });
    expect(textOf(read)).toBe("première ligne\n");

    const listed = await mcp.callTool({ name: "list_directory", arguments: { sandboxId, path: "/tmp/mcp" } });
    expect(textOf(listed)).toMatch(/file\s+16\s+\/tmp\/mcp\/notes\.txt/);

    const endpoint = await mcp.callTool({ name: "get_endpoint", arguments: { sandboxId, port: 8000 } });
    const url = textOf(endpoint).split("\n")[0] ?? "";
    await mcp.callTool({
      name: "run_command",
      arguments: {
        sandboxId,
        command: "cd /tmp/mcp && nohup python3 -m http.server 8000 > /tmp/http.log 2>&1 &",
      },
    });
    await expect
      .poll(async () => (await fetch(`${url}notes.txt`).catch(() => undefined))?.status, { timeout: 30_000 })
      .toBe(200);
    expect(await (await fetch(`${url}notes.txt`)).text()).toBe("première ligne\n");

    const sandboxes = await mcp.callTool({ name: "list_sandboxes", arguments: { state: ["Running"] } });
    expect(textOf(sandboxes)).toContain(`${sandboxId}  Running  python`);
  });

  test("a large output comes back bounded, with a note on how much was cut and how to get the rest", async () => {
    const big = await mcp.callTool({
      name: "run_command",
      arguments: { sandboxId, command: "head -c 200000 /dev/zero | tr '\\0' a" },
    });
    const text = textOf(big);
    expect(text.length).toBeLessThan(maxTextBytes + 1024);
    expect(text).toContain(`stdout:\n${"a".repeat(maxTextBytes)}\n[truncated`);
    expect(text).toContain("of 195.3 KiB; 163.3 KiB cut");
    expect(text).toMatch(/Redirect the output to a file/);

    await mcp.callTool({
      name: "run_command",
      arguments: {
        sandboxId,
        command: "seq 1 100000 > /tmp/numbers.txt; head -c 4096 /dev/urandom > /tmp/noise.bin",
      },
    });
    const file = textOf(
      await mcp.callTool({ name: "read_file", arguments: { sandboxId, path: "/tmp/numbers.txt" } }),
    );
    expect(file.length).toBeLessThan(maxTextBytes + 1024);
    expect(file).toMatch(/^1\n2\n3\n/);
    expect(file).toContain("[truncated: showed the first 32.0 KiB of 575.1 KiB.");
    const binary = textOf(
      await mcp.callTool({ name: "read_file", arguments: { sandboxId, path: "/tmp/noise.bin" } }),
    );
    // Random bytes hold a NUL in 4 KiB with near certainty (1 - (255/256)^4096).
    expect(binary).toBe(
      "/tmp/noise.bin is a binary file of 4.0 KiB; it is not shown. Look into it with run_command (file, xxd -l 512, base64 on a part).",
    );
  });

  test("a command past its timeout is stopped, and what it printed comes back", async () => {
    const started = Date.now();
    const late = await mcp.callTool({
      name: "run_command",
      arguments: { sandboxId, command: "echo started; sleep 100; echo never", timeoutMs: 1000 },
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(textOf(late)).toMatch(
      /^exit code: \d+ \(stopped: it ran past its timeout of 1000 ms\)\nstdout:\nstarted\n/,
    );
    expect(textOf(late)).not.toContain("never");
  });

  test("a small image comes back as an image", async () => {
    // A 1×1 PNG.
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    await mcp.callTool({
      name: "write_file",
      arguments: { sandboxId, path: "/tmp/dot.png", content: png, encoding: "base64" },
    });
    const read = (await mcp.callTool({
      name: "read_file",
      arguments: { sandboxId, path: "/tmp/dot.png" },
    })) as CallToolResult;
    expect(read.content).toEqual([
      { type: "text", text: "/tmp/dot.png: image/png, 70 B" },
      { type: "image", data: png, mimeType: "image/png" },
    ]);
  });

  test("a client that leaves mid-command stops the command, and the server goes on", async () => {
    const leaving = new AbortController();
    const call = fetch(`${t.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "run_command",
          arguments: { sandboxId, command: "sleep 1013", timeoutMs: 3_600_000 },
        },
      }),
      signal: leaving.signal,
    }).catch(() => undefined);
    const running = () =>
      mcp.callTool({
        name: "run_command",
        arguments: { sandboxId, command: "pgrep -f 'sleep 101[3]' | wc -l" },
      });
    await expect.poll(async () => textOf(await running()), { timeout: 30_000 }).toContain("stdout:\n1\n");
    leaving.abort();
    await call;
    await expect.poll(async () => textOf(await running()), { timeout: 30_000 }).toContain("stdout:\n0\n");
  });

  test("Paddock's errors come back as tool errors with their code, and the session goes on", async () => {
    const missing = await mcp.callTool({
      name: "read_file",
      arguments: { sandboxId, path: "/no/such/file" },
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^file_not_found: /);
    const bad = await mcp.callTool({ name: "create_sandbox", arguments: { template: "no-such-template" } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^template_not_found: /);
    expect((await mcp.listTools()).tools.length).toBe(sandboxTools.length);
  });

  test("another account's sandbox id is not found, and nothing of it comes back", async () => {
    const stranger = await mcpClient(t.url, strangerKey);
    try {
      for (const [name, args] of [
        ["run_command", { sandboxId, command: "cat /tmp/mcp/notes.txt" }],
        ["read_file", { sandboxId, path: "/tmp/mcp/notes.txt" }],
        ["list_directory", { sandboxId, path: "/tmp/mcp" }],
        ["get_endpoint", { sandboxId, port: 8000 }],
        ["kill_sandbox", { sandboxId }],
      ] as const) {
        const result = await stranger.callTool({ name, arguments: args });
        expect(result.isError, name).toBe(true);
        expect(textOf(result), name).toMatch(/^sandbox_not_found: /);
        expect(textOf(result), name).not.toContain("première");
      }
      expect(textOf(await stranger.callTool({ name: "list_sandboxes", arguments: {} }))).toBe(
        "No sandboxes.",
      );
    } finally {
      await stranger.close();
    }
  });

  test("a key scoped to memory sees no sandbox tools and cannot call them", async () => {
    const scoped = await mcpClient(t.url, memoryKey);
    try {
      expect((await scoped.listTools()).tools).toEqual([]);
      const refused = await scoped.callTool({ name: "run_command", arguments: { sandboxId, command: "id" } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain("Tool run_command not found");
    } finally {
      await scoped.close();
    }
  });

  test("a missing or bad key is refused with the control plane's 401", async () => {
    for (const headers of [{}, { authorization: "Bearer pk_not_a_key" }, { authorization: "Basic abc" }]) {
      const response = await fetch(`${t.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ code: "unauthorized", detail: expect.any(String) });
    }
    await expect(mcpClient(t.url, "pk_not_a_key")).rejects.toThrow();
  });

  test("kill_sandbox deletes the sandbox", async () => {
    const killed = await mcp.callTool({ name: "kill_sandbox", arguments: { sandboxId } });
    expect(textOf(killed)).toBe(`Killed sandbox ${sandboxId}.`);
    await expect(Sandbox.connect(sandboxId, { baseUrl: t.url, apiKey })).rejects.toMatchObject({
      code: "sandbox_not_found",
    });
  });
});

describe("hostile requests to /mcp", () => {
  let t: TestServer;
  let apiKey: string;
  const post = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body,
      signal: AbortSignal.timeout(30_000),
    });

  beforeAll(async () => {
    t = await startTestServer();
    await Paddock.signup("mcp-hostile@example.com", password, { baseUrl: t.url });
    const { client } = await Paddock.login("mcp-hostile@example.com", password, { baseUrl: t.url });
    apiKey = (await client.keys.create({ name: "hostile" })).secret;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("malformed JSON-RPC gets a 4xx JSON-RPC error, never a 5xx or a hang", async () => {
    for (const body of [
      "{not json",
      "",
      "null",
      "42",
      "[]",
      '{"jsonrpc":"1.0","method":"tools/list","id":1}',
      '{"jsonrpc":"2.0","method":{"x":1},"id":1}',
      JSON.stringify(Array.from({ length: 5000 }, (_, id) => ({ jsonrpc: "2.0", id, method: "tools/list" }))),
    ]) {
      const response = await post(body);
      expect(response.status, body.slice(0, 60)).toBeGreaterThanOrEqual(400);
      expect(response.status, body.slice(0, 60)).toBeLessThan(500);
      expect(await response.json(), body.slice(0, 60)).toMatchObject({
        jsonrpc: "2.0",
        error: { code: expect.any(Number), message: expect.any(String) },
      });
    }
    // A well-formed message with bad parameters is answered in the protocol, as JSON-RPC says.
    const badParams = await post(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_command","arguments":"rm -rf /"}}',
    );
    expect(badParams.status).toBe(200);
    expect(await badParams.json()).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      error: { code: expect.any(Number) },
    });
    // The server answers a well-formed request after all that.
    const fine = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
    expect(fine.status).toBe(200);
  });

  test("GET and DELETE (sessions this endpoint does not keep) get 405 in JSON-RPC's shape", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${t.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    }
  });

  test("a huge request body is refused", async () => {
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "write_file",
        arguments: { sandboxId: "sbx_x", path: "/tmp/x", content: "a".repeat(8 << 20) },
      },
    });
    const response = await post(huge);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: "payload_too_large" });
  });
});
