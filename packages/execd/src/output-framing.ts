import type { IncomingMessage } from "node:http";
import { EXECD_OUTPUT_FRAMING_HEADER } from "@paddock/common/contracts";
import { badRequest } from "./http.js";

/**
 * How a stream's output becomes events: `lines` (OpenSandbox's execd: one event per line, the
 * newline dropped) or `chunks` (the bytes as the command wrote them; a Paddock extension).
 */
export type OutputFraming = "lines" | "chunks";

/** The framing a request asks for with `X-Paddock-Output-Framing`; lines when absent. */
export function requestedFraming(req: IncomingMessage): OutputFraming {
  const value = req.headers[EXECD_OUTPUT_FRAMING_HEADER.toLowerCase()];
  if (value === undefined || value === "lines") return "lines";
  if (value === "chunks") return "chunks";
  throw badRequest(`${EXECD_OUTPUT_FRAMING_HEADER} must be lines or chunks`);
}

/** A line longer than this goes out in pieces of this size, so one endless line cannot grow execd. */
export const longestLine = 1024 * 1024;

/**
 * Turns a stream's text into events. `emit` reports false when the client's buffer is full;
 * `push` and `end` report false when any of their emits did.
 */
export interface OutputWriter {
  push(text: string): boolean;
  /** Sends what is left (a last line without a newline). */
  end(): boolean;
}

export function outputWriter(framing: OutputFraming, emit: (text: string) => boolean): OutputWriter {
  if (framing === "chunks") return { push: emit, end: () => true };
  return new LineWriter(emit);
}

/** One event per line as Go's bufio.ScanLines cuts them: without "\n", and without a "\r" before it. */
class LineWriter implements OutputWriter {
  private partial = "";

  constructor(private readonly emit: (line: string) => boolean) {}

  push(text: string): boolean {
    let flowing = true;
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      const line = this.partial + text.slice(start, newline);
      this.partial = "";
      flowing = this.emit(line.endsWith("\r") ? line.slice(0, -1) : line) && flowing;
      start = newline + 1;
    }
    this.partial += text.slice(start);
    while (this.partial.length > longestLine) {
      flowing = this.emit(this.partial.slice(0, longestLine)) && flowing;
      this.partial = this.partial.slice(longestLine);
    }
    return flowing;
  }

  end(): boolean {
    if (this.partial === "") return true;
    const rest = this.partial;
    this.partial = "";
    return this.emit(rest);
  }
}
