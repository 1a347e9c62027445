import { serveMcpStdio } from "@paddock/mcp";
import type { Command } from "commander";
import { connectionOf, type GlobalOptions } from "../connection.js";

/** `paddock mcp`: Paddock's MCP tools over stdio, for a local MCP client that starts this command. */
export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description("serve Paddock's tools to an MCP client over stdin and stdout (the client starts this)")
    .action(async (_options, command: Command) => {
      // stdout carries the protocol alone: failures go to stderr, as for every command.
      await serveMcpStdio(connectionOf(command.optsWithGlobals<GlobalOptions>()));
    });
}
