#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { PaddockError } from "paddock";
import { registerAccountCommands } from "./commands/account.js";
import { registerAccountTemplateCommands } from "./commands/account-templates.js";
import { registerAuditCommands } from "./commands/audit.js";
import { registerCpCommand } from "./commands/cp.js";
import { registerExecCommand } from "./commands/exec.js";
import { registerKeyCommands } from "./commands/keys.js";
import { registerMcpCommand } from "./commands/mcp.js";
import { registerMemoryCommands } from "./commands/memory.js";
import { registerSandboxCommands } from "./commands/sandbox.js";
import { registerSecretCommands } from "./commands/secrets.js";
import { registerServerCommands } from "./commands/server.js";
import { registerShellCommand } from "./commands/shell.js";
import { registerTemplateCommands } from "./commands/templates.js";
import { registerUsageCommand } from "./commands/usage.js";
import { registerVolumeCommands } from "./commands/volumes.js";
import { CliError, usageError, usageLine } from "./output.js";

const overview = `
Examples:
  paddock login                                   log in (asks for email and password)
  paddock sandbox create --template python        a sandbox; prints its id
  paddock exec ID -- python3 -c 'print(6*7)'      run a command in it
  paddock shell ID                                an interactive shell in it
  paddock cp data.csv ID:/work/                   copy a file in (or out: ID:/path .)
  paddock template build ./dir --name NAME        build your own template from a Dockerfile
  paddock mcp                                     Paddock's tools for an MCP client (stdio)
  paddock serve [--config FILE] [--generate-key]  run the server on this host
  paddock runtime serve [--config FILE]           the /v1 runtime API and endpoint proxy alone
  paddock templates build [ID...] [--force]       operator: build the built-in template images on this host
  paddock audit export [--account EMAIL]          operator: the audit log from this host's database

Errors print one line, \`paddock: <detail> (<code>)\`, and exit with status 1 (2 for usage errors).`;

function program(): Command {
  const paddock = new Command("paddock")
    .description("Sandboxes for untrusted code: the Paddock command line")
    .option(
      "--base-url <url>",
      "the server (default: $PADDOCK_BASE_URL, the stored one, http://127.0.0.1:8080)",
    )
    .option("--api-key <key>", "the credential (default: $PADDOCK_API_KEY, then the stored one)")
    // Settings made before the subcommands are added are inherited by them.
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      outputError: (message, write) => write(usageLine(message)),
    })
    .exitOverride()
    .showSuggestionAfterError()
    .addHelpText("after", overview);
  paddock.on("command:*", (operands: string[]) => {
    paddock.outputHelp();
    throw usageError(`unknown command '${operands[0]}'`);
  });

  paddock.commandsGroup("Account:");
  registerAccountCommands(paddock);
  registerKeyCommands(paddock);
  registerAuditCommands(paddock);
  paddock.commandsGroup("Sandboxes:");
  registerSandboxCommands(paddock);
  registerExecCommand(paddock);
  registerShellCommand(paddock);
  registerCpCommand(paddock);
  registerTemplateCommands(paddock);
  registerAccountTemplateCommands(paddock);
  registerVolumeCommands(paddock);
  paddock.commandsGroup("Data and usage:");
  registerSecretCommands(paddock);
  registerMemoryCommands(paddock);
  registerUsageCommand(paddock);
  paddock.commandsGroup("Agents:");
  registerMcpCommand(paddock);
  paddock.commandsGroup("This host:");
  registerServerCommands(paddock);
  return paddock;
}

/** One line on stderr, `paddock: <detail> (<code>)`, and the exit status. */
function report(error: unknown): number {
  // Commander has printed its usage error (or the help asked for) already.
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
  if ((error as Error).name === "ExitPromptError") return 130; // Ctrl-C at a prompt
  const line = (detail: string, code: string) =>
    process.stderr.write(`paddock: ${detail.replace(/\s*\n\s*/g, " ")} (${code})\n`);
  if (error instanceof CliError) {
    line(error.message, error.code);
    return error.exitStatus;
  }
  if (error instanceof PaddockError) {
    line(error.message, error.code);
    return 1;
  }
  const code = (error as NodeJS.ErrnoException).code;
  line(
    String((error as Error).message ?? error),
    typeof code === "string" ? code.toLowerCase() : "unexpected_error",
  );
  return 1;
}

program()
  .parseAsync()
  .then(
    () => process.exitCode ?? 0,
    (error: unknown) => report(error),
  )
  .then((status) => process.exit(status));
