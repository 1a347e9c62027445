import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Surface } from "./surfaces.js";
import type { PaddockConnection } from "./tool-results.js";
import { tools } from "./tools/index.js";

export const serverInfo = { name: "paddock", version: "0.1.0" };

const instructions =
  "Paddock runs code in isolated Linux sandboxes. Start one with create_sandbox (template `python` unless another fits; list_templates shows them), then use its id with run_command, run_code, read_file, write_file, list_directory and get_endpoint. Kill it with kill_sandbox when the work is done. Long outputs are cut with a note saying how to read the rest.";

/**
 * An MCP server offering the tools the credential may call: those of the surfaces it is allowed
 * (a key scoped to `memory` sees no sandbox tools). Every call goes to Paddock with the credential.
 */
export function paddockMcpServer(connection: PaddockConnection, allowed: ReadonlySet<Surface>): McpServer {
  // Tools declared up front: a key allowed none still gets an empty list, not "method not found".
  const server = new McpServer(serverInfo, { capabilities: { tools: {} }, instructions });
  for (const tool of tools) if (allowed.has(tool.surface)) tool.register(server, connection);
  return server;
}

/** The surfaces some tool needs: what a stdio server asks the server about. */
export function toolSurfaces(): Surface[] {
  return [...new Set(tools.map((tool) => tool.surface))];
}
