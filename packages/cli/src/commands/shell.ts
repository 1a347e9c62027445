import type { Command } from "commander";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { usageError } from "../output.js";
import { openTerminal, runTerminal, sendResize, type TerminalSize } from "../terminal-client.js";

interface ShellOptions extends GlobalOptions {
  command?: string;
}

/** `paddock shell ID [--command CMD]`: this terminal, attached to a terminal in the sandbox. */
export function registerShellCommand(program: Command): void {
  program
    .command("shell")
    .description("an interactive shell in a sandbox; exits with the shell's exit code")
    .argument("<id>", "the sandbox's id")
    .option("--command <command>", "run this program on the terminal instead of a login shell")
    .addHelpText("after", "\nNeeds a terminal on stdin; for commands without one, use `paddock exec`.")
    .action(async (id: string, _options, command: Command) => {
      process.exitCode = await shell(id, command.optsWithGlobals<ShellOptions>());
    });
}

async function shell(id: string, options: ShellOptions): Promise<number> {
  const stdin = process.stdin;
  // Raw keystrokes need a terminal to read them from; piped input would be a half-working shell.
  if (!stdin.isTTY)
    throw usageError("paddock shell needs a terminal on stdin; run commands without one with `paddock exec`");
  const size = (): TerminalSize => ({ cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 });
  const socket = await openTerminal(connectionOf(options), id, size(), options.command);

  const restore = () => stdin.setRawMode(false);
  // Whatever ends the process, the local terminal leaves raw mode.
  process.once("exit", restore);
  const resize = () => sendResize(socket, size());
  const hangUp = () => socket.close(1000);
  process.stdout.on("resize", resize);
  process.once("SIGTERM", hangUp);
  process.once("SIGHUP", hangUp);
  stdin.setRawMode(true);
  try {
    return await runTerminal(socket, stdin, process.stdout);
  } catch (error) {
    // The remote prompt may have left the cursor mid-line: the error gets a line of its own.
    process.stdout.write("\r\n");
    throw error;
  } finally {
    restore();
    stdin.pause();
    process.stdout.off("resize", resize);
    process.off("SIGTERM", hangUp);
    process.off("SIGHUP", hangUp);
  }
}
