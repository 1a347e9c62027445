import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Surface } from "./surfaces.js";
import { guarded, type PaddockConnection } from "./tool-results.js";

/** What a tool's work gets besides its arguments. */
export interface ToolContext {
  connection: PaddockConnection;
  /** Aborted when the client cancels the call or leaves. */
  signal: AbortSignal;
}

/** One MCP tool over Paddock: the surface its key needs, and how it registers on a server. */
export interface PaddockTool {
  name: string;
  surface: Surface;
  register(server: McpServer, connection: PaddockConnection): void;
}

/** Defines a tool once; `register` serves it on any transport's server. */
export function defineTool<Shape extends z.ZodRawShape>(definition: {
  name: string;
  surface: Surface;
  title: string;
  description: string;
  input: Shape;
  annotations?: ToolAnnotations;
  run(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<CallToolResult>;
}): PaddockTool {
  return {
    name: definition.name,
    surface: definition.surface,
    register(server, connection) {
      const config = {
        title: definition.title,
        description: definition.description,
        inputSchema: definition.input,
        ...(definition.annotations ? { annotations: definition.annotations } : {}),
      };
      // The SDK has validated the arguments against `input` before this runs.
      const callback = (args: unknown, extra: { signal: AbortSignal }) =>
        guarded(() =>
          definition.run(args as z.infer<z.ZodObject<Shape>>, { connection, signal: extra.signal }),
        );
      server.registerTool(definition.name, config, callback as never);
    },
  };
}
