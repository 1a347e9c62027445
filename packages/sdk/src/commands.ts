import { CommandExitError } from "./errors.js";
import type { RequestOptions, Transport } from "./transport.js";
import type { CommandResult } from "./types.js";

export interface RunOptions extends RequestOptions {
  cwd?: string;
  envs?: Record<string, string>;
  /** Command timeout inside the sandbox. */
  timeoutMs?: number;
  /** Start it and return at once; it keeps running in the sandbox. */
  background?: boolean;
  /** Called with each piece of output as it arrives (the command then streams). */
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
}

/** `sandbox.commands`: shell commands in the sandbox. */
export class Commands {
  constructor(
    private readonly transport: Transport,
    private readonly sandboxId: string,
  ) {}

  /** Runs a command to completion. Throws CommandExitError when it exits non-zero. */
  async run(command: string, options: RunOptions = {}): Promise<CommandResult> {
    const body = {
      command,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.envs ? { env: options.envs } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.background ? { background: true } : {}),
    };
    const request = {
      ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    let result: CommandResult;
    if (options.onStdout || options.onStderr) {
      result = { stdout: "", stderr: "", exitCode: -1 };
      for await (const event of this.transport.events(
        `/sandboxes/${this.sandboxId}/run/stream`,
        body,
        request,
      )) {
        const text = String(event.text ?? "");
        if (event.type === "stdout") {
          result.stdout += text;
          options.onStdout?.(text);
        } else if (event.type === "stderr") {
          result.stderr += text;
          options.onStderr?.(text);
        } else if (event.type === "execution_complete" || event.type === "error") {
          result.exitCode = Number(event.exit_code ?? (event.type === "error" ? -1 : 0));
        }
      }
    } else {
      result = await this.transport.json<CommandResult>(
        "POST",
        `/sandboxes/${this.sandboxId}/run`,
        body,
        request,
      );
    }
    if (!options.background && result.exitCode !== 0)
      throw new CommandExitError(result.exitCode, result.stdout, result.stderr);
    return result;
  }
}
