/**
 * How a stream's output becomes events: `lines` (OpenSandbox's execd: one event per line, the
 * newline dropped) or `chunks` (the bytes as the command wrote them; a Paddock extension).
 */
export type OutputFraming = "lines" | "chunks";

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

/**
 * How lines are cut, as OpenSandbox's execd cuts them: a command's output (`POST /command`) ends a
 * line at "\n" or "\r" ("\r\n" counts once) and sends a blank line as "\n", so progress bars
 * that redraw with "\r" arrive as they draw; a session's output (`/session/{id}/run`) is cut as
 * Go's bufio.ScanLines cuts it: at "\n", a "\r" before it dropped, a blank line as "".
 */
export type LineCut = "command" | "session";

export function outputWriter(
  framing: OutputFraming,
  cut: LineCut,
  emit: (text: string) => boolean,
): OutputWriter {
  if (framing === "chunks") return { push: emit, end: () => true };
  return cut === "command" ? new CommandLineWriter(emit) : new SessionLineWriter(emit);
}

/** What both line writers share: the unfinished line, bounded, and the last one sent at the end. */
abstract class LineWriter implements OutputWriter {
  protected partial = "";

  constructor(protected readonly emit: (line: string) => boolean) {}

  abstract push(text: string): boolean;

  /** Keeps the unfinished rest of a push, sending it in pieces while it is too long. */
  protected keep(rest: string): boolean {
    let flowing = true;
    this.partial += rest;
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

class CommandLineWriter extends LineWriter {
  /** Whether the last character pushed was "\r", so a "\n" opening the next push completes it. */
  private afterCarriageReturn = false;

  push(text: string): boolean {
    let flowing = true;
    let start = 0;
    // Two indexOf scans, not a regex: output without "\r" costs one scan of the chunk.
    let newline = text.indexOf("\n");
    let carriageReturn = text.indexOf("\r");
    while (newline >= 0 || carriageReturn >= 0) {
      const at = carriageReturn < 0 || (newline >= 0 && newline < carriageReturn) ? newline : carriageReturn;
      const line = this.partial + text.slice(start, at);
      this.partial = "";
      const afterCarriageReturn = at > 0 ? text[at - 1] === "\r" : this.afterCarriageReturn;
      if (line !== "") flowing = this.emit(line) && flowing;
      else if (!(at === newline && afterCarriageReturn)) flowing = this.emit("\n") && flowing;
      start = at + 1;
      if (at === newline) newline = text.indexOf("\n", start);
      else carriageReturn = text.indexOf("\r", start);
    }
    if (text !== "") this.afterCarriageReturn = text.endsWith("\r");
    return this.keep(text.slice(start)) && flowing;
  }
}

class SessionLineWriter extends LineWriter {
  push(text: string): boolean {
    let flowing = true;
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      const line = this.partial + text.slice(start, newline);
      this.partial = "";
      flowing = this.emit(line.endsWith("\r") ? line.slice(0, -1) : line) && flowing;
      start = newline + 1;
    }
    return this.keep(text.slice(start)) && flowing;
  }
}
