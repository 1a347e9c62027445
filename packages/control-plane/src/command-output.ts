import type { SseEvent } from "@paddock/common";

/** Characters of stdout (and of stderr) a buffered `/run` answer keeps; `/run/stream` has no limit. */
export const maxBufferedOutput = 8 * 2 ** 20;

export interface CommandOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** Present (true) when output beyond `maxBufferedOutput` was dropped. */
  truncated?: true;
  /** Present (true) when the kernel killed the command for memory and the sandbox lived on (runc). */
  oomKilled?: true;
}

/** Collects execd's command events into one answer, reading to the end to learn the exit code. */
export async function collectCommand(events: AsyncIterable<SseEvent>): Promise<CommandOutput> {
  const output: CommandOutput = { stdout: "", stderr: "", exitCode: -1 };
  for await (const event of events) {
    if (event.type === "stdout" || event.type === "stderr") {
      const text = String(event.text ?? "");
      const room = maxBufferedOutput - output[event.type].length;
      if (text.length > room) output.truncated = true;
      if (room > 0) output[event.type] += text.slice(0, room);
    } else if (event.type === "execution_complete" || event.type === "error") {
      output.exitCode = Number(event.exit_code ?? -1);
      if ((event.error as { ename?: unknown } | undefined)?.ename === "OutOfMemory") output.oomKilled = true;
    }
  }
  return output;
}
