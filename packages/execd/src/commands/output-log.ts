import { unfinishedCharacter } from "./output-framing.js";

/**
 * A command's output, kept for status and log polling: complete lines in order, bounded in
 * total size; when full, the oldest lines go (the cursor arithmetic stays absolute).
 *
 * Appending costs in proportion to the chunk, not to what is kept, so a long line without
 * newlines or millions of short lines do not slow the command's stream down as the log fills.
 * The unfinished line is kept as bytes, decoded once complete, so a character split across two
 * reads is kept whole; a piece of a very long line stays bytes (the reads that brought it) until
 * it is read, as a large string per 2 MiB of output would keep the garbage collector busy.
 */
export class OutputLog {
  /** Kept lines start at `lines[head]`; the slots before it were emptied and await compaction. */
  private lines: Array<string | Buffer[]> = [];
  private head = 0;
  /** The unfinished line's bytes, as the reads that brought them. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private bytes = 0;
  /** Lines dropped since the start: the absolute index of the first kept line. */
  private dropped = 0;

  constructor(private readonly maxBytes = 8 * 2 ** 20) {}

  append(chunk: Buffer): void {
    const lastNewline = chunk.lastIndexOf(0x0a);
    if (lastNewline >= 0) {
      const text = this.completed(chunk.subarray(0, lastNewline + 1)).toString("utf8");
      let start = 0;
      for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
        this.push(text.slice(start, newline + 1));
        start = newline + 1;
      }
    }
    if (lastNewline + 1 < chunk.length) {
      this.partial.push(chunk.subarray(lastNewline + 1));
      this.partialBytes += chunk.length - lastNewline - 1;
    }
    // A very long line without a newline still counts against the bound (all but a character
    // whose last bytes are still to come).
    if (this.partialBytes > this.maxBytes / 4) this.pushPiece();
  }

  /** Pushes the unfinished line as a line of its own, all but a character still unfinished. */
  private pushPiece(): void {
    // A character's start is within its last 4 bytes: a shorter last read is joined to those before.
    if ((this.partial.at(-1)?.length ?? 0) < 4) this.partial = [Buffer.concat(this.partial)];
    const last = this.partial.pop() as Buffer;
    const end = unfinishedCharacter(last);
    const piece = [...this.partial, last.subarray(0, end)];
    this.partial = end < last.length ? [last.subarray(end)] : [];
    this.partialBytes = last.length - end;
    this.push(piece);
  }

  /**
   * About what the log holds in memory: its bytes, and per kept line the string's header and its
   * slot, which millions of short lines make several times their characters.
   */
  footprint(): number {
    return this.bytes + this.partialBytes + (this.lines.length - this.head) * lineOverhead;
  }

  finish(): void {
    if (this.partialBytes === 0) return;
    this.push(this.completed().toString("utf8"));
  }

  /** Lines after `cursor` (0-based absolute index), and the cursor for the next read. */
  read(cursor?: number): { text: string; next: number } {
    const total = this.dropped + this.lines.length - this.head;
    const from = cursor === undefined ? this.dropped : Math.max(cursor, this.dropped);
    const lines = this.lines.slice(this.head + from - this.dropped);
    if (cursor === undefined) lines.push(this.partial);
    // Pieces of a long line in a row are decoded together: a character may straddle two.
    let text = "";
    let pieces: Buffer[] = [];
    for (const line of lines) {
      if (typeof line !== "string") pieces.push(...line);
      else {
        text += Buffer.concat(pieces).toString("utf8") + line;
        pieces = [];
      }
    }
    return { text: text + Buffer.concat(pieces).toString("utf8"), next: total };
  }

  /** The unfinished line, ended by `end` when given, as one buffer; the next one starts empty. */
  private completed(end?: Buffer): Buffer {
    if (this.partialBytes === 0) return end ?? Buffer.alloc(0);
    const line = Buffer.concat(end ? [...this.partial, end] : this.partial);
    this.partial = [];
    this.partialBytes = 0;
    return line;
  }

  private push(line: string | Buffer[]): void {
    this.lines.push(line);
    this.bytes += sizeOf(line);
    while (this.bytes > this.maxBytes && this.lines.length - this.head > 1) {
      this.bytes -= sizeOf(this.lines[this.head] ?? "");
      this.lines[this.head] = ""; // its text is freed now; the slot goes at the next compaction
      this.head++;
      this.dropped++;
    }
    // Remove emptied slots in one go once they are half the array (shift() per line is O(n)).
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * Bytes of heap a kept line takes beyond its characters (V8's string header, the array's slot):
 * 4 Mi two-character lines held 172 MiB of heap on Node 24.
 */
const lineOverhead = 40;

/** What a line counts against the bound: its characters, or a long line's piece its bytes. */
function sizeOf(line: string | Buffer[]): number {
  if (typeof line === "string") return line.length;
  let bytes = 0;
  for (const part of line) bytes += part.length;
  return bytes;
}
