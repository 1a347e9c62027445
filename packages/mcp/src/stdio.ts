import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { paddockMcpServer, toolSurfaces } from "./mcp-server.js";
import { probeSurfaces } from "./surfaces.js";
import type { PaddockConnection } from "./tool-results.js";

/**
 * Serves the tools over stdin and stdout (a local client starts this process) until stdin ends.
 * The server tells first which surfaces the credential may call; a bad key fails here.
 */
export async function serveMcpStdio(connection: PaddockConnection): Promise<void> {
  const allowed = await probeSurfaces(connection, toolSurfaces());
  const server = paddockMcpServer(connection, allowed);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once("end", resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
