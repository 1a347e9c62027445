/**
 * A command's output, kept for status and log polling: complete lines in order, bounded in
 * total size; when full, the oldest lines go (the cursor arithmetic stays absolute).
 *
 * Appending costs in proportion to the chunk, not to what is kept, so a long line without
 * newlines or millions of short lines do not slow the command's stream down as the log fills.
 */
export class OutputLog {
  /** Kept lines start at `lines[head]`; the slots before it were emptied and await compaction. */
  private lines: string[] = [];
  private head = 0;
  private partial = "";
  private bytes = 0;
  /** Lines dropped since the start: the absolute index of the first kept line. */
  private dropped = 0;

  constructor(private readonly maxBytes = 8 * 2 ** 20) {}

  append(text: string): void {
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      this.push(this.partial + text.slice(start, newline + 1));
      this.partial = "";
      start = newline + 1;
    }
    this.partial += text.slice(start);
    // A very long line without a newline still counts against the bound.
    if (this.partial.length > this.maxBytes / 4) {
      this.push(this.partial);
      this.partial = "";
    }
  }

  finish(): void {
    if (this.partial) this.push(this.partial);
    this.partial = "";
  }

  /** Lines after `cursor` (0-based absolute index), and the cursor for the next read. */
  read(cursor?: number): { text: string; next: number } {
    const total = this.dropped + this.lines.length - this.head;
    const from = cursor === undefined ? this.dropped : Math.max(cursor, this.dropped);
    const text =
      this.lines.slice(this.head + from - this.dropped).join("") + (cursor === undefined ? this.partial : "");
    return { text, next: total };
  }

  private push(line: string): void {
    this.lines.push(line);
    this.bytes += line.length;
    while (this.bytes > this.maxBytes && this.lines.length - this.head > 1) {
      this.bytes -= this.lines[this.head]?.length ?? 0;
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
