import { CommandExitError, errorFor, PaddockError } from "./errors.js";
import type { RequestOptions, Transport } from "./transport.js";
import type { CommandResult } from "./types.js";

export interface StreamOptions extends RequestOptions {
  cwd?: string;
  envs?: Record<string, string>;
  /** Command timeout inside the sandbox. */
  timeoutMs?: number;
}

export interface RunOptions extends StreamOptions {
  /** Start it and return at once; it keeps running in the sandbox. */
  background?: boolean;
  /** Called with each piece of output as it arrives (the command then streams). */
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
}

/** What `commands.stream` yields: output as it arrives, then one `exit`. */
export type CommandEvent =
  | { type: "stdout"; text: string }
  | { type: "stderr"; text: string }
  | { type: "exit"; exitCode: number };

/** `sandbox.commands`: shell commands in the sandbox. */
export class Commands {
  constructor(
    private readonly transport: Transport,
    private readonly sandboxId: string,
  ) {}

  /** Runs a command to completion. Throws CommandExitError when it exits non-zero. */
  async run(command: string, options: RunOptions = {}): Promise<CommandResult> {
    let result: CommandResult;
    if ((options.onStdout || options.onStderr) && !options.background) {
      result = { stdout: "", stderr: "", exitCode: -1 };
      for await (const event of this.stream(command, options)) {
        if (event.type === "exit") {
          result.exitCode = event.exitCode;
        } else {
          result[event.type] += event.text;
          (event.type === "stdout" ? options.onStdout : options.onStderr)?.(event.text);
        }
      }
    } else {
      result = await this.transport.json<CommandResult>(
        "POST",
        `/sandboxes/${this.sandboxId}/run`,
        { ...commandBody(command, options), ...(options.background ? { background: true } : {}) },
        requestOf(options),
      );
    }
    if (!options.background && result.exitCode !== 0)
      throw new CommandExitError(result.exitCode, result.stdout, result.stderr, result.oomKilled === true);
    return result;
  }

  /**
   * Runs a command and yields its output as it arrives, ending with `{ type: "exit", exitCode }`
   * whatever the code (no CommandExitError). A sandbox that dies mid-command (deleted, killed,
   * out of memory) ends the iteration with the server's PaddockError instead of an exit. The
   * request timeout covers the wait for the stream to start; leaving the loop early stops the
   * command.
   */
  async *stream(command: string, options: StreamOptions = {}): AsyncGenerator<CommandEvent> {
    const events = this.transport.events(
      `/sandboxes/${this.sandboxId}/run/stream`,
      commandBody(command, options),
      requestOf(options),
    );
    for await (const event of events) {
      if (event.type === "stdout" || event.type === "stderr") {
        yield { type: event.type, text: String(event.text ?? "") };
      } else if (event.type === "error" && event.exit_code === undefined) {
        // The server's report of a sandbox that died: a code and a detail, no exit code.
        throw errorFor(Number(event.status ?? 502), String(event.code), String(event.detail));
      } else if (event.type === "execution_complete" || event.type === "error") {
        yield { type: "exit", exitCode: Number(event.exit_code ?? 0) };
        return;
      }
    }
    throw new PaddockError(
      `the stream of \`${command}\` ended before the command did`,
      "connection_failed",
      0,
      true,
    );
  }
}

function commandBody(command: string, options: StreamOptions) {
  return {
    command,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.envs ? { env: options.envs } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  };
}

function requestOf(options: RequestOptions): RequestOptions {
  return {
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
