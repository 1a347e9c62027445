import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { paddockMcpServer } from "./mcp-server.js";
import type { Surface } from "./surfaces.js";
import type { PaddockConnection } from "./tool-results.js";

/**
 * Answers one Streamable HTTP request (stateless: no session is kept between requests). `body`
 * is the request's text, already read within the server's body limit; the caller has
 * authenticated the request and names the credential's connection and allowed surfaces.
 */
export async function serveMcpHttp(
  request: IncomingMessage,
  response: ServerResponse,
  body: string | undefined,
  caller: { connection: PaddockConnection; allowed: ReadonlySet<Surface> },
): Promise<void> {
  let message: unknown;
  try {
    message = JSON.parse(body ?? "");
  } catch {
    return answerJsonRpcError(response, 400, -32700, "Parse error: the body is not JSON");
  }
  // JSON-RPC calls an empty batch invalid; the transport would accept it and answer nothing.
  if (Array.isArray(message) && message.length === 0)
    return answerJsonRpcError(response, 400, -32600, "Invalid Request: an empty batch");
  const server = paddockMcpServer(caller.connection, caller.allowed);
  // JSON answers, not an SSE stream: each request gets its whole answer at once.
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  // A client that leaves aborts the tool calls still running for it.
  response.once("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, message);
}

/** A refusal in JSON-RPC's own shape, as MCP clients expect from the endpoint. */
export function answerJsonRpcError(
  response: ServerResponse,
  status: number,
  code: number,
  message: string,
): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
