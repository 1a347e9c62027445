import { setTimeout as sleep } from "node:timers/promises";
import type { SseEvent } from "@paddock/common";

/** Characters of stdout (and of stderr) a buffered `/run` answer keeps; `/run/stream` has no limit. */
export const maxBufferedOutput = 8 * 2 ** 20;

/**
 * How fast output past `maxBufferedOutput` is read (and dropped), in characters a second. A
 * client waiting for the end of endless output then costs the server little, and the producer
 * waits in its own pipe rather than running at full speed for nobody.
 */
const droppedPerSecond = 16 * 2 ** 20;

/**
 * A buffered answer's stdout and stderr, each kept up to `maxBufferedOutput`, and a code cell's
 * results (values, images, HTML) while their JSON stays within the same bound.
 */
export class BoundedOutput {
  stdout = "";
  stderr = "";
  results: Array<Record<string, unknown>> = [];
  truncated = false;
  private resultsLength = 0;
  private resultsFull = false;
  private dropped = 0;
  private droppingSince = 0;

  /** Keeps what fits; resolves once dropping the rest is due at `droppedPerSecond`. */
  async add(stream: "stdout" | "stderr", text: string): Promise<void> {
    const room = maxBufferedOutput - this[stream].length;
    if (room > 0) this[stream] += text.slice(0, room);
    if (text.length <= room) return;
    await this.drop(text.length - Math.max(room, 0));
  }

  /** Keeps a result whole while the results fit; from the first that does not, drops them all. */
  async addResult(result: Record<string, unknown>): Promise<void> {
    const length = JSON.stringify(result).length;
    if (!this.resultsFull && this.resultsLength + length <= maxBufferedOutput) {
      this.results.push(result);
      this.resultsLength += length;
      return;
    }
    this.resultsFull = true;
    await this.drop(length);
  }

  /** Counts `characters` dropped; resolves once that is due at `droppedPerSecond`. */
  private async drop(characters: number): Promise<void> {
    if (!this.truncated) {
      this.truncated = true;
      this.droppingSince = performance.now();
    }
    this.dropped += characters;
    const wait = this.droppingSince + (this.dropped / droppedPerSecond) * 1000 - performance.now();
    if (wait > 1) await sleep(wait);
  }
}

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
  const output = new BoundedOutput();
  let exitCode = -1;
  let oomKilled = false;
  for await (const event of events) {
    if (event.type === "stdout" || event.type === "stderr") {
      await output.add(event.type, String(event.text ?? ""));
    } else if (event.type === "execution_complete" || event.type === "error") {
      exitCode = Number(event.exit_code ?? -1);
      if ((event.error as { ename?: unknown } | undefined)?.ename === "OutOfMemory") oomKilled = true;
    }
  }
  return {
    stdout: output.stdout,
    stderr: output.stderr,
    exitCode,
    ...(output.truncated ? { truncated: true as const } : {}),
    ...(oomKilled ? { oomKilled: true as const } : {}),
  };
}
