import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine, paddockBin } from "./user-cli.js";

/** The text of a tool result's text blocks. */
function textOf(result: unknown): string {
  return (result as CallToolResult).content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
}

/** `paddock mcp` started by an MCP client, as a desktop assistant starts it from its configuration. */
function stdioTransport(user: CliUser, args: string[] = []): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [paddockBin, ...args, "mcp"],
    env: user.environment(),
    stderr: "pipe",
  });
}

describe("paddock mcp: the tools over stdio", () => {
  let t: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("mcp-stdio");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("with the stored login: creates a sandbox, runs code in it, writes and reads a file back", async () => {
    const client = new Client({ name: "paddock-test", version: "1.0.0" });
    await client.connect(stdioTransport(user));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(["create_sandbox", "run_code", "read_file", "write_file", "kill_sandbox"]),
      );
      const created = await client.callTool({
        name: "create_sandbox",
        arguments: { template: "python", timeoutSeconds: 600 },
      });
      const sandboxId = /Created sandbox (\S+) /.exec(textOf(created))?.[1] ?? "";
      expect(sandboxId).toMatch(/^sbx/);
      const code = await client.callTool({
        name: "run_code",
        arguments: { sandboxId, code: "open('/tmp/answer.txt', 'w').write(str(6 * 7))\n6 * 7" },
      });
      expect(textOf(code)).toContain("42");
      const read = await client.callTool({
        name: "read_file",
        arguments: { sandboxId, path: "/tmp/answer.txt" },
      });
      expect(textOf(read)).toBe("42");
      await client.callTool({
        name: "write_file",
        arguments: { sandboxId, path: "/tmp/from-mcp.txt", content: "written over stdio" },
      });
      // The same sandbox, seen by the CLI's other commands.
      const cat = await user.run(["exec", sandboxId, "--", "cat", "/tmp/from-mcp.txt"]);
      expect(cat.stdout).toBe("written over stdio");
      expect(textOf(await client.callTool({ name: "kill_sandbox", arguments: { sandboxId } }))).toBe(
        `Killed sandbox ${sandboxId}.`,
      );
    } finally {
      await client.close();
    }
  });

  test("a key scoped to memory: the server says which tools it may call, and it sees no sandbox tools", async () => {
    const key = await user.json<{ secret: string }>([
      "keys",
      "create",
      "--name",
      "notes",
      "--scope",
      "memory",
    ]);
    const client = new Client({ name: "paddock-test", version: "1.0.0" });
    await client.connect(stdioTransport(user, ["--api-key", key.secret]));
    try {
      expect((await client.listTools()).tools).toEqual([]);
      const refused = await client.callTool({ name: "create_sandbox", arguments: {} });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  test("a bad key: the command fails at once with the CLI's one error line", async () => {
    const result = await user.run(["--api-key", "pk_not_a_key", "mcp"]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(errorLine("unauthorized"));
    expect(result.stdout).toBe("");
  });
});
