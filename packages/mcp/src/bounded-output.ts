/**
 * What a tool hands back to a model is bounded: a model's context is small and an answer is held
 * whole in memory, so text is cut past a limit with a note that says how much was cut and how to
 * get the rest.
 */

/** Most bytes of text per stream (a command's stdout, its stderr, a file) in one tool result. */
export const maxTextBytes = 32 * 1024;
/** Most bytes of an image a tool returns as an image (base64); larger ones are described instead. */
export const maxImageBytes = 256 * 1024;
/** Most entries of a directory listing in one tool result. */
export const maxListedEntries = 500;

/** A byte count as people read it: `812 B`, `31.5 KiB`, `2.0 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The first `limit` bytes of UTF-8 text, never ending in half a character. */
export function utf8Prefix(bytes: Uint8Array, limit: number): string {
  let end = Math.min(limit, bytes.length);
  // Back off continuation bytes (10xxxxxx) so the cut falls on a character boundary.
  if (end < bytes.length) while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** Collects a stream of text, keeping the first `maxTextBytes` and counting the rest. */
export class BoundedText {
  private readonly chunks: string[] = [];
  private keptBytes = 0;
  /** Every byte added, kept or not. */
  totalBytes = 0;

  add(text: string): void {
    const bytes = Buffer.from(text);
    this.totalBytes += bytes.length;
    const room = maxTextBytes - this.keptBytes;
    if (room <= 0) return;
    const kept = bytes.length <= room ? text : utf8Prefix(bytes, room);
    this.chunks.push(kept);
    this.keptBytes += bytes.length <= room ? bytes.length : Buffer.byteLength(kept);
  }

  get text(): string {
    return this.chunks.join("");
  }

  get cutBytes(): number {
    return this.totalBytes - this.keptBytes;
  }
}

/** Text cut to `maxTextBytes`, with the note `truncationNote` gives when anything was cut. */
export function boundedText(text: string, howToGetTheRest: string): string {
  const output = new BoundedText();
  output.add(text);
  return output.cutBytes > 0 ? output.text + truncationNote(output, howToGetTheRest) : output.text;
}

/** `[… cut …]` after the shown part: how much was shown, of how much, and how to get the rest. */
export function truncationNote(output: BoundedText, howToGetTheRest: string): string {
  return `\n[truncated: showed the first ${formatBytes(output.totalBytes - output.cutBytes)} of ${formatBytes(output.totalBytes)}; ${formatBytes(output.cutBytes)} cut. ${howToGetTheRest}]`;
}
