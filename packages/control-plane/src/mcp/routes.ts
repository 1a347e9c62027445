import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyPluginAsync } from "fastify";
import { bearerOf, principalOf } from "../http/auth-hook.js";
import type { Identity, Scope } from "../identity/identity.js";

/** Who calls /mcp: the credential as sent (the tools call the API with it) and its key's scope. */
export interface McpCaller {
  credential: string;
  scope: Scope | null;
}

/**
 * Answers one MCP Streamable HTTP request on the raw request and response. Given by the server
 * that composes the control plane: it knows its own address, which the tools call.
 */
export type McpEndpoint = (
  request: IncomingMessage,
  response: ServerResponse,
  body: string | undefined,
  caller: McpCaller,
) => Promise<void>;

/** Most bytes one MCP message may have: a file written through it included. */
export const maxMcpBodyBytes = 1024 * 1024;

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless. Authenticated as every
 * control-plane route is (a bad key gets the usual 401), but open to keys of any scope: the
 * endpoint offers each key only the tools of its scope.
 */
export const mcpRoutes: FastifyPluginAsync<{ identity: Identity; endpoint: McpEndpoint }> = async (
  app,
  { identity, endpoint },
) => {
  app.addHook("onRequest", async (request) => {
    request.principal = await identity.authenticate(bearerOf(request));
  });
  // The endpoint reads the JSON itself, so that a body that is not JSON gets JSON-RPC's parse error.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string", bodyLimit: maxMcpBodyBytes },
    (_request, body, done) => done(null, body),
  );

  app.post("/mcp", async (request, reply) => {
    const caller = { credential: bearerOf(request) ?? "", scope: principalOf(request).scope };
    reply.hijack();
    try {
      await endpoint(request.raw, reply.raw, request.body as string | undefined, caller);
    } catch (error) {
      request.log.error({ err: error }, "an MCP request failed");
      answerJsonRpcError(reply.raw, 500, -32603, "Internal error");
    }
  });

  // Stateless: there is no stream of server messages to open (GET) and no session to end (DELETE).
  app.route({
    method: ["GET", "DELETE"],
    url: "/mcp",
    handler: async (_request, reply) => {
      reply.hijack();
      answerJsonRpcError(
        reply.raw,
        405,
        -32000,
        "Method not allowed: this endpoint keeps no sessions; POST messages",
        {
          allow: "POST",
        },
      );
    },
  });
};

function answerJsonRpcError(
  response: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { ...headers, "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
