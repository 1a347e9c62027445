/**
 * How a stream's output becomes events: `lines` (OpenSandbox's execd: one event per line, the
 * newline dropped) or `chunks` (the bytes as the command wrote them; a Paddock extension).
 */
export type OutputFraming = "lines" | "chunks";

/**
 * A line longer than this many bytes goes out in pieces of at most this size, so one endless
 * line cannot grow execd. A piece ends before a character's first byte, so no character is cut.
 */
export const longestLine = 1024 * 1024;

/**
 * Turns a stream's bytes into events, each the bytes of its text (UTF-8, decoded when encoded:
 * see output-events.ts). The writers work on bytes so that a character split across two pipe
 * reads arrives whole. `emit` gets an event's text as a range of a buffer (no view made per
 * line: a read of short lines is thousands), valid during the call only; it reports false when
 * the client's buffer is full, and `push` and `end` report false when any of their emits did.
 */
export interface OutputWriter {
  push(chunk: Buffer): boolean;
  /** Sends what is left (a last line without a newline, the start of a character never finished). */
  end(): boolean;
}

/**
 * How lines are cut, as OpenSandbox's execd cuts them: a command's output (`POST /command`) ends a
 * line at "\n" or "\r" ("\r\n" counts once) and sends a blank line as "\n", so progress bars
 * that redraw with "\r" arrive as they draw; a session's output (`/session/{id}/run`) is cut as
 * Go's bufio.ScanLines cuts it: at "\n", a "\r" before it dropped, a blank line as "".
 */
export type LineCut = "command" | "session";

/** Sends the text `bytes[start, end)`. */
export type Emit = (bytes: Buffer, start: number, end: number) => boolean;

export function outputWriter(framing: OutputFraming, cut: LineCut, emit: Emit): OutputWriter {
  if (framing === "chunks") return new ChunkWriter(emit);
  return cut === "command" ? new CommandLineWriter(emit) : new SessionLineWriter(emit);
}

const newline = 0x0a;
const carriageReturn = 0x0d;
const blankLine = Buffer.from("\n");
const empty = Buffer.alloc(0);

/** Whether `byte` continues a UTF-8 sequence (0b10xxxxxx) rather than starting a character. */
const continues = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * Where to cut `bytes` at or before `at` so that no character is split: back to the start of
 * the character at `at` (at most 3 bytes back). Cutting before a byte that starts a character
 * (or is ASCII) decodes the two halves to exactly the text of the whole, valid or not.
 */
export function characterStart(bytes: Uint8Array, at: number): number {
  for (let start = at; start >= Math.max(0, at - 3); start--) if (!continues(bytes[start])) return start;
  // Four continuation bytes in a row end no character: any cut among them decodes the same.
  return at;
}

/** How many bytes a character starting with `lead` has (1 for a byte that starts none). */
const sequenceLength = (lead: number) =>
  lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 1;

/** Where the unfinished character at the end of `bytes` starts (`bytes.length` when there is none). */
export function unfinishedCharacter(bytes: Uint8Array): number {
  const start = characterStart(bytes, bytes.length - 1);
  return start >= 0 && start + sequenceLength(bytes[start] ?? 0) > bytes.length ? start : bytes.length;
}

/** Sends each read as it comes, holding back a character whose last bytes are still to come. */
class ChunkWriter implements OutputWriter {
  private held = empty;

  constructor(private readonly emit: Emit) {}

  push(chunk: Buffer): boolean {
    const bytes = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
    const end = unfinishedCharacter(bytes);
    // A copy: the few bytes held must not keep the whole read alive.
    this.held = end < bytes.length ? Buffer.from(bytes.subarray(end)) : empty;
    return end > 0 ? this.emit(bytes, 0, end) : true;
  }

  end(): boolean {
    const rest = this.held;
    this.held = empty;
    return rest.length > 0 ? this.emit(rest, 0, rest.length) : true;
  }
}

/** What both line writers share: the unfinished line's bytes, bounded, and the last one sent at the end. */
abstract class LineWriter implements OutputWriter {
  /**
   * The unfinished line's bytes, `partial[0, partialLength)`: copied in, so a line without end
   * costs no allocation per read or per piece, and let go once a long line has ended.
   */
  private partial = empty;
  private partialLength = 0;

  constructor(private readonly emit: Emit) {}

  abstract push(chunk: Buffer): boolean;

  /**
   * Sends the line that `chunk[start, end)` ends (the unfinished one in front of it), or `blank`
   * for an empty line (nothing when undefined); with `dropReturn`, without a "\r" at its end.
   */
  protected line(chunk: Buffer, start: number, end: number, blank?: Buffer, dropReturn = false): boolean {
    let bytes = chunk;
    if (this.partialLength > 0) {
      this.gather(chunk, start, end);
      bytes = this.partial.subarray(0, this.partialLength);
      start = 0;
      end = bytes.length;
      this.partialLength = 0;
      if (this.partial.length > keptRoom) this.partial = empty;
    }
    if (dropReturn && end > start && bytes[end - 1] === carriageReturn) end--;
    if (end > start) return this.emit(bytes, start, end);
    return blank ? this.emit(blank, 0, blank.length) : true;
  }

  /** Keeps `chunk` from `start` on, the unfinished rest of a push, sending it in pieces while it is too long. */
  protected keep(chunk: Buffer, start: number): boolean {
    this.gather(chunk, start, chunk.length);
    let flowing = true;
    while (this.partialLength > longestLine) {
      const cut = characterStart(this.partial, longestLine);
      // A view of its own: the next piece is gathered into the same memory.
      flowing = this.emit(this.partial.subarray(0, cut), 0, cut) && flowing;
      this.partial.copyWithin(0, cut, this.partialLength);
      this.partialLength -= cut;
    }
    return flowing;
  }

  end(): boolean {
    if (this.partialLength === 0) return true;
    const line = this.partial.subarray(0, this.partialLength);
    this.partialLength = 0;
    return this.emit(line, 0, line.length);
  }

  /** Appends `chunk[start, end)` to the unfinished line. */
  private gather(chunk: Buffer, start: number, end: number): void {
    const length = this.partialLength + end - start;
    if (length > this.partial.length) {
      const larger = Buffer.allocUnsafe(Math.max(length, 2 * this.partial.length, 1024));
      larger.set(this.partial.subarray(0, this.partialLength));
      this.partial = larger;
    }
    this.partial.set(chunk.subarray(start, end), this.partialLength);
    this.partialLength = length;
  }
}

/** Room for an unfinished line kept after a line ends; a longer line's is let go. */
const keptRoom = 64 * 1024;

class CommandLineWriter extends LineWriter {
  /** Whether the last byte pushed was "\r", so a "\n" opening the next push completes it. */
  private afterCarriageReturn = false;

  push(chunk: Buffer): boolean {
    let flowing = true;
    let start = 0;
    // Two byte scans (memchr), not a per-byte loop: output without "\r" costs one scan of the read.
    // "\n" and "\r" never occur inside a UTF-8 character, so cutting at them splits none.
    let nextNewline = chunk.indexOf(newline);
    let nextCarriageReturn = chunk.indexOf(carriageReturn);
    while (nextNewline >= 0 || nextCarriageReturn >= 0) {
      const at =
        nextCarriageReturn < 0 || (nextNewline >= 0 && nextNewline < nextCarriageReturn)
          ? nextNewline
          : nextCarriageReturn;
      const afterCarriageReturn = at > 0 ? chunk[at - 1] === carriageReturn : this.afterCarriageReturn;
      // A blank line is sent as "\n", except the "\n" of a "\r\n".
      const blank = at === nextNewline && afterCarriageReturn ? undefined : blankLine;
      flowing = this.line(chunk, start, at, blank) && flowing;
      start = at + 1;
      if (at === nextNewline) nextNewline = chunk.indexOf(newline, start);
      else nextCarriageReturn = chunk.indexOf(carriageReturn, start);
    }
    if (chunk.length > 0) this.afterCarriageReturn = chunk[chunk.length - 1] === carriageReturn;
    return this.keep(chunk, start) && flowing;
  }
}

class SessionLineWriter extends LineWriter {
  push(chunk: Buffer): boolean {
    let flowing = true;
    let start = 0;
    for (let at = chunk.indexOf(newline); at >= 0; at = chunk.indexOf(newline, start)) {
      // A blank line is sent as "", the "\r" of a "\r\n" dropped.
      flowing = this.line(chunk, start, at, empty, true) && flowing;
      start = at + 1;
    }
    return this.keep(chunk, start) && flowing;
  }
}
