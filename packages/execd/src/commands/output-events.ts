import { isUtf8 } from "node:buffer";
import { unfinishedCharacter } from "./output-framing.js";

/**
 * A pipe read's output events as SSE bytes, built straight from the output's bytes: each event's
 * bytes are those of `encodeSse({ type, text }, timestamp)` (common/sse.ts) with `text` the bytes
 * decoded as UTF-8 (an invalid sequence as U+FFFD, as Buffer's `toString` decodes it). Valid
 * output is copied as it is, only the ASCII characters JSON escapes escaped: neither the text nor
 * its JSON nor the event is ever a string, which for output without newlines (1 MiB events) cost
 * most of execd's time (decision 0172).
 */
export class OutputEvents {
  /** Where the next events go; after `take()` the rest of the same memory, so small batches share it. */
  private buffer = Buffer.alloc(0);
  private length = 0;
  /** How large the last batch was. */
  private lastBatch = 0;
  /** `","timestamp":<timestamp>}\n\n`, the end of each event, made once per timestamp. */
  private tail = Buffer.alloc(0);
  private tailTimestamp = Number.NaN;
  /** A source seen before and how far it is valid UTF-8, so a read of many lines is checked once. */
  private source?: Buffer;
  private validUpTo = 0;

  /** Adds an event whose text is `source[start, end)`. */
  add(type: string, source: Buffer, start: number, end: number, timestamp: number): void {
    const head = eventHead(type);
    if (timestamp !== this.tailTimestamp) {
      this.tail = Buffer.from(`","timestamp":${timestamp}}\n\n`, "latin1");
      this.tailTimestamp = timestamp;
    }
    const tail = this.tail;
    if (!this.valid(source, start, end)) {
      // Rare: decoded and escaped as a string, so each U+FFFD falls where Buffer's decoder puts it.
      const json = JSON.stringify(source.toString("utf8", start, end)).slice(1, -1);
      this.reserve(head.length + Buffer.byteLength(json) + tail.length);
      this.append(head);
      this.length += this.buffer.write(json, this.length);
    } else if (end - start < 64) {
      // A short line: copied byte by byte, cheaper than any call per line.
      this.reserve(head.length + 6 * (end - start) + tail.length);
      this.append(head);
      this.escape(source, start, end);
    } else {
      const first = firstToEscape(source, start, end);
      const growth = first < 0 ? 0 : escapedGrowth(source, first, end);
      this.reserve(head.length + end - start + growth + tail.length);
      this.append(head);
      if (first < 0) this.append(source.subarray(start, end));
      else {
        this.append(source.subarray(start, first));
        this.escape(source, first, end);
      }
    }
    this.append(tail);
  }

  /** The events added since the last call, or undefined when there were none. */
  take(): Buffer | undefined {
    this.source = undefined;
    if (this.length === 0) return undefined;
    const events = this.buffer.subarray(0, this.length);
    this.buffer = this.buffer.subarray(this.length);
    this.lastBatch = this.length;
    this.length = 0;
    return events;
  }

  /**
   * Whether `source[start, end)` is valid UTF-8. The source is checked once, up to a character
   * still unfinished at its end: the writers cut lines only before a character, so a range of
   * a valid source is valid.
   */
  private valid(source: Buffer, start: number, end: number): boolean {
    if (source !== this.source) {
      this.source = source;
      const whole = unfinishedCharacter(source);
      this.validUpTo = isUtf8(source.subarray(0, whole)) ? whole : 0;
    }
    return end <= this.validUpTo || isUtf8(source.subarray(start, end));
  }

  private append(bytes: Uint8Array): void {
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** Copies `source[start, end)`, escaping what JSON escapes. */
  private escape(source: Buffer, start: number, end: number): void {
    const buffer = this.buffer;
    let at = this.length;
    for (let i = start; i < end; i++) {
      const byte = source[i] as number;
      const escaped = escapes[byte];
      if (escaped === undefined) buffer[at++] = byte;
      else for (let k = 0; k < escaped.length; k++) buffer[at++] = escaped[k] as number;
    }
    this.length = at;
  }

  /** Room for `bytes` more; a new buffer (the events so far copied) when this one is short. */
  private reserve(bytes: number): void {
    if (this.buffer.length - this.length >= bytes) return;
    // Exact for one large event, doubling for many small ones, from the last batch's size: a
    // read of short lines is much like the one before.
    const next = Buffer.allocUnsafe(
      Math.max(this.length + bytes, 2 * this.length, this.lastBatch, 16 * 1024),
    );
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
  }
}

const heads = new Map<string, Buffer>();
/** `event: <type>\ndata: {"type":"<type>","text":"`, as encodeSse begins an event. */
function eventHead(type: string): Buffer {
  let head = heads.get(type);
  if (!head) {
    head = Buffer.from(`event: ${type}\ndata: {"type":${JSON.stringify(type)},"text":"`);
    heads.set(type, head);
  }
  return head;
}

/** JSON's escape of each byte that needs one: the controls, '"' and '\', as JSON.stringify writes them. */
const escapes: Array<Uint8Array | undefined> = Array.from({ length: 256 }, (_, byte) =>
  byte < 0x20 || byte === 0x22 || byte === 0x5c
    ? Buffer.from(JSON.stringify(String.fromCharCode(byte)).slice(1, -1), "latin1")
    : undefined,
);

/** How many bytes escaping `source[first, end)` adds. */
function escapedGrowth(source: Buffer, first: number, end: number): number {
  let growth = 0;
  for (let i = first; i < end; i++) growth += (escapes[source[i] as number]?.length ?? 1) - 1;
  return growth;
}

/**
 * The first byte of `source[start, end)` that JSON escapes, or -1: '"' and '\\' found by memchr
 * (Buffer's indexOf), the controls four bytes at a time with word arithmetic, about three times
 * as fast as byte by byte. This scan is most of what a 1 MiB event without escapes costs.
 */
export function firstToEscape(source: Buffer, start = 0, end = source.length): number {
  const range = source.subarray(start, end);
  let first = firstControl(range);
  for (const byte of [0x22, 0x5c]) {
    const at = range.indexOf(byte);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first < 0 ? -1 : start + first;
}

/** The first byte below 0x20 in `bytes`, or -1. */
function firstControl(bytes: Uint8Array): number {
  let i = 0;
  // Words start at a multiple of 4 in the underlying memory.
  const aligned = -bytes.byteOffset & 3;
  if (bytes.length - aligned >= 4) {
    for (; i < aligned; i++) if ((bytes[i] as number) < 0x20) return i;
    const words = new Int32Array(bytes.buffer, bytes.byteOffset + aligned, (bytes.length - aligned) >>> 2);
    let w = 0;
    // Four words a round: the loop's own cost is a good part of the scan's.
    while (
      w + 4 <= words.length &&
      ((hasControl(words[w] as number) |
        hasControl(words[w + 1] as number) |
        hasControl(words[w + 2] as number) |
        hasControl(words[w + 3] as number)) &
        0x80808080) ===
        0
    )
      w += 4;
    while (w < words.length && (hasControl(words[w] as number) & 0x80808080) === 0) w++;
    i = aligned + 4 * w;
  }
  for (; i < bytes.length; i++) if ((bytes[i] as number) < 0x20) return i;
  return -1;
}

/**
 * Non-zero in 0x80808080 when any of a word's four bytes is below 0x20: the classic "has a byte
 * less than n", (x - n·0x01010101) & ~x & 0x80808080, exact about whether (though not which).
 */
const hasControl = (x: number) => (x - 0x20202020) & ~x;
