/**
 * Server-Sent Events shared by execd, the runtime and the control plane.
 *
 * Two framings exist on the wire: the standard `data: <json>` lines, and the upstream
 * execd framing of one raw JSON object followed by a blank line. We emit the standard form
 * and parse both.
 */

export interface SseEvent {
  type: string;
  [field: string]: unknown;
}

/** One event as SSE text; with `timestamp`, as if the event's `timestamp` field were set to it. */
export function encodeSse(event: SseEvent, timestamp?: number): string {
  if (timestamp !== undefined && "timestamp" in event) return encodeSse({ ...event, timestamp });
  const json = JSON.stringify(event);
  // A timestamp goes into the JSON text rather than into a copy of the event (text can be 1 MiB).
  const data = timestamp === undefined ? json : `${json.slice(0, -1)},"timestamp":${timestamp}}`;
  return `event: ${event.type}\ndata: ${data}\n\n`;
}

/** Incremental parser: feed chunks, get complete events back. */
export class SseParser {
  private buffer = "";

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let boundary = this.nextBoundary();
    while (boundary) {
      const block = this.buffer.slice(0, boundary.index);
      this.buffer = this.buffer.slice(boundary.index + boundary.length);
      const event = parseBlock(block);
      if (event) events.push(event);
      boundary = this.nextBoundary();
    }
    return events;
  }

  /** Characters received that do not yet make a whole event. */
  get pendingLength(): number {
    return this.buffer.length;
  }

  /** Whatever is left when the stream ends (a final block without its blank line). */
  end(): SseEvent[] {
    const rest = this.buffer;
    this.buffer = "";
    const event = parseBlock(rest);
    return event ? [event] : [];
  }

  private nextBoundary(): { index: number; length: number } | undefined {
    const match = /\r?\n\r?\n/.exec(this.buffer);
    return match ? { index: match.index, length: match[0].length } : undefined;
  }
}

function parseBlock(block: string): SseEvent | undefined {
  const lines = block.split(/\r?\n/);
  const data: string[] = [];
  let eventName: string | undefined;
  let sawField = false;
  for (const line of lines) {
    if (line === "" || line.startsWith(":")) continue;
    const field = /^(data|event|id|retry):\s?(.*)$/.exec(line);
    if (field) {
      sawField = true;
      if (field[1] === "data") data.push(field[2] ?? "");
      if (field[1] === "event") eventName = field[2];
    } else if (!sawField) {
      data.push(line); // upstream raw-JSON framing
    }
  }
  if (data.length === 0) return undefined;
  const text = data.join("\n");
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const event = parsed as Record<string, unknown>;
      const type = typeof event.type === "string" ? event.type : (eventName ?? "message");
      return { ...event, type };
    }
    return { type: eventName ?? "message", data: parsed };
  } catch {
    return { type: eventName ?? "message", data: text };
  }
}
