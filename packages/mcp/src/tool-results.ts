import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { PaddockError } from "paddock";

/** The server and the credential every tool call goes through (the SDK's connection options). */
export interface PaddockConnection {
  baseUrl: string;
  apiKey: string;
  requestTimeoutMs?: number;
}

/** A result of text blocks. */
export function textResult(...blocks: string[]): CallToolResult {
  return { content: blocks.map((text) => ({ type: "text", text })) };
}

/**
 * A failed call as a tool error the model can act on: the server's stable code and its detail.
 * The session goes on; nothing is thrown past the tool.
 */
export function errorResult(error: unknown): CallToolResult {
  const text =
    error instanceof PaddockError
      ? `${error.code}: ${error.message}`
      : `unexpected_error: ${error instanceof Error ? error.message : String(error)}`;
  return { content: [{ type: "text", text }], isError: true };
}

/** Runs a tool's work, turning any failure into `errorResult`. */
export async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    return errorResult(error);
  }
}
