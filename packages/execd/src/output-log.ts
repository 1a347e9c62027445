/**
 * A command's output, kept for status and log polling: complete lines in order, bounded in
 * total size; when full, the oldest lines go (the cursor arithmetic stays absolute).
 */
export class OutputLog {
  private readonly lines: string[] = [];
  private partial = "";
  private bytes = 0;
  private dropped = 0;

  constructor(private readonly maxBytes = 8 * 2 ** 20) {}

  append(text: string): void {
    const pieces = (this.partial + text).split("\n");
    this.partial = pieces.pop() ?? "";
    for (const line of pieces) this.push(`${line}\n`);
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
    const total = this.dropped + this.lines.length;
    const from = cursor === undefined ? this.dropped : Math.max(cursor, this.dropped);
    const text = this.lines.slice(from - this.dropped).join("") + (cursor === undefined ? this.partial : "");
    return { text, next: total };
  }

  private push(line: string): void {
    this.lines.push(line);
    this.bytes += line.length;
    while (this.bytes > this.maxBytes && this.lines.length > 1) {
      this.bytes -= this.lines.shift()?.length ?? 0;
      this.dropped++;
    }
  }
}
