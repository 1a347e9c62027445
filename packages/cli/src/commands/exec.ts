import { once } from "node:events";
import type { Command } from "commander";
import { Sandbox } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { collectPair, usageLine } from "../output.js";
import { shellJoin } from "../shell-quote.js";

interface ExecOptions extends GlobalOptions {
  cwd?: string;
  env?: Record<string, string>;
}

/** `paddock exec ID [--cwd D] [--env K=V]... -- CMD ARGS…`. */
export function registerExecCommand(program: Command): void {
  program
    .command("exec")
    .description("run a command in a sandbox, streaming its output; exits with its exit code")
    .argument("<id>", "the sandbox's id")
    .argument("<command...>", "the program and its arguments (after --, when they have options)")
    .option("--cwd <directory>", "the working directory in the sandbox")
    .option("--env <KEY=VALUE>", "an environment variable (repeatable)", collectPair)
    // Options meant for the command, given without --, get a hint where they belong.
    .configureOutput({
      outputError: (message, write) =>
        write(
          usageLine(
            message,
            message.includes("unknown option") ? "; put the command's own options after --" : "",
          ),
        ),
    })
    .addHelpText(
      "after",
      `\nArguments are quoted for the sandbox's shell, as docker exec passes them:\n  paddock exec ID -- printf '%s\\n' "a b"     prints two lines\n  paddock exec ID -- sh -c 'ls | wc -l'      a pipeline, through a shell`,
    )
    .action(async (id: string, args: string[], _options, command: Command) => {
      const options = command.optsWithGlobals<ExecOptions>();
      process.exitCode = await exec(id, args, options);
    });
}

async function exec(id: string, args: string[], options: ExecOptions): Promise<number> {
  const sandbox = await Sandbox.connect(id, connectionOf(options));
  // Ctrl-C ends the request, and the server stops the command with it.
  const interrupt = new AbortController();
  process.once("SIGINT", () => interrupt.abort());
  let exitCode = -1;
  try {
    for await (const event of sandbox.commands.stream(shellJoin(args), {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.env ? { envs: options.env } : {}),
      signal: interrupt.signal,
    })) {
      if (event.type === "exit") {
        exitCode = event.exitCode;
      } else {
        const stream = event.type === "stdout" ? process.stdout : process.stderr;
        // A slow reader downstream slows the command's output rather than filling memory.
        if (!stream.write(event.text)) await once(stream, "drain");
      }
    }
  } catch (error) {
    if (interrupt.signal.aborted) return 130;
    throw error;
  }
  return exitCode;
}
