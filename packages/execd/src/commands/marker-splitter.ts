/**
 * Finds an end-of-run marker in a stream: text before it is passed on as it arrives, except
 * the last few characters that might be the start of the marker.
 */
export class MarkerSplitter {
  private held = "";

  constructor(
    private readonly marker: string,
    private readonly emit: (text: string) => void,
  ) {}

  /** Returns the text after the marker once it has been seen, else undefined. */
  push(text: string): string | undefined {
    const all = this.held + text;
    const at = all.indexOf(this.marker);
    if (at >= 0) {
      if (at > 0) this.emit(all.slice(0, at));
      this.held = "";
      return all.slice(at + this.marker.length);
    }
    let keep = Math.min(all.length, this.marker.length - 1);
    // Never between the halves of a surrogate pair: a session's output is encoded again as bytes.
    const high = all.charCodeAt(all.length - keep - 1);
    if (keep < all.length && high >= 0xd800 && high <= 0xdbff) keep++;
    const out = all.slice(0, all.length - keep);
    this.held = all.slice(all.length - keep);
    if (out) this.emit(out);
    return undefined;
  }
}
