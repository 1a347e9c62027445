import type { ServerResponse } from "node:http";
import { encodeSse, type SseEvent } from "./sse.js";

/**
 * The one server-sent-events writer, over a node:http response (execd's streams, and the
 * control plane's through its Fastify glue).
 *
 * Two ways to send, by whether the producer can wait (see decisions 0171, 0172):
 * - `send` never waits and reports false once the client is behind. A producer that can be
 *   paused (a process's pipe) pauses until `drained()`; one that cannot is protected by
 *   `maxBufferedBytes`: a client that falls that far behind is dropped (it reconnects and
 *   reloads) rather than buffered without bound.
 * - `write` resolves at once while little waits for the client (`maxPacedBytes`), else once it
 *   has taken it: a producer that awaits it is held back by a slow or absent reader.
 */
export interface SseWriter {
  send(event: SseEvent): boolean;
  /**
   * Several events already encoded as SSE bytes (with the fields they carry, timestamp and all),
   * in one write: one pipe read's lines, say.
   */
  sendEncoded(events: Uint8Array): boolean;
  write(event: SseEvent): Promise<void>;
  /** An SSE comment line (`: text`), which clients ignore: keeps idle connections alive. */
  comment(text: string): void;
  /** Resolves once the client has taken what waits for it, or the stream has ended. */
  drained(): Promise<void>;
  end(): void;
  /** Aborted once the stream has ended, for whatever reason (`end()`, the client left). */
  readonly signal: AbortSignal;
}

export interface SseWriterOptions {
  /** Each event carries `timestamp` (milliseconds since the epoch), as execd's events do. */
  timestamp?: boolean;
  /** A client this far behind unpaced `send`s is dropped. Without it, pausing is the producer's. */
  maxBufferedBytes?: number;
}

/**
 * How much `write` lets wait for a client before it waits for it to drain: a few events, so
 * producing the next one overlaps with sending the last (a fast client keeps its speed) while a
 * slow one holds at most this plus one event.
 */
export const maxPacedBytes = 256 * 1024;

/** Starts the event stream: 200 with SSE headers, sent at once. */
export function openSseWriter(res: ServerResponse, options: SseWriterOptions = {}): SseWriter {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  const controller = new AbortController();
  const { timestamp, maxBufferedBytes } = options;
  const writable = () => !res.writableEnded && !res.destroyed;
  const encode = (event: SseEvent): string => encodeSse(event, timestamp ? Date.now() : undefined);
  const push = (text: string | Uint8Array): boolean => {
    if (!writable()) return false;
    const room = res.write(text);
    if (maxBufferedBytes !== undefined && res.writableLength > maxBufferedBytes) writer.end();
    return room;
  };
  const drained = (): Promise<void> => {
    if (controller.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        res.off("drain", done);
        controller.signal.removeEventListener("abort", done);
        resolve();
      };
      res.on("drain", done);
      controller.signal.addEventListener("abort", done, { once: true });
    });
  };
  const writer: SseWriter = {
    signal: controller.signal,
    send: (event) => push(encode(event)),
    sendEncoded: push,
    write: async (event) => {
      if (!writable()) return;
      res.write(encode(event));
      if (res.writableLength > maxPacedBytes) await drained();
    },
    comment: (text) => {
      push(`: ${text}\n\n`);
    },
    drained,
    end: () => {
      controller.abort();
      if (!res.writableEnded) res.end();
    },
  };
  res.on("close", writer.end);
  return writer;
}

/**
 * The streams a server has open, so that it can end them when it shuts down and close their
 * connections once the end is sent: none holds up the wait for connections to close.
 */
export class SseStreams {
  private readonly open = new Map<SseWriter, ServerResponse>();

  constructor(private readonly options: SseWriterOptions = {}) {}

  start(res: ServerResponse): SseWriter {
    const writer = openSseWriter(res, this.options);
    this.open.set(writer, res);
    writer.signal.addEventListener("abort", () => this.open.delete(writer), { once: true });
    return writer;
  }

  closeAll(): void {
    for (const [writer, res] of [...this.open]) {
      res.once("finish", () => res.socket?.destroy());
      writer.end();
    }
  }
}
