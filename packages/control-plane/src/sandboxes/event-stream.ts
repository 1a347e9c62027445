import { Errors, encodeSse, isPaddockError, PaddockError, type SseEvent } from "@paddock/common";
import type { FastifyInstance, FastifyReply } from "fastify";

/**
 * One server-sent event stream, open until the client leaves, the server closes or `end()`.
 *
 * Two ways to send, by whether the producer can wait (see decision 0171):
 * - `write` resolves at once while little waits for the client (`maxPacedBytes`), else once it
 *   has taken it. A producer that awaits it (a sandbox's output, read from execd only as fast
 *   as it is written here) is held back by a slow or absent reader, so a bounded amount waits
 *   per connection.
 * - `send` never waits: for producers that cannot be paused (the account's sandbox changes). A
 *   client that falls `maxBufferedBytes` behind is dropped rather than buffered without bound.
 */
export interface EventStream {
  send(event: SseEvent): void;
  write(event: SseEvent): Promise<void>;
  /** An SSE comment line (`: text`), which clients ignore: keeps idle connections alive. */
  comment(text: string): void;
  end(): void;
  /** Aborted once the stream has ended, for whatever reason. */
  readonly signal: AbortSignal;
}

/**
 * A client reading slower than unpausable events come is dropped once this much waits for it
 * (it reconnects and reloads), rather than buffered without bound.
 */
export const maxBufferedBytes = 1024 * 1024;

/**
 * How much `write` lets wait for a client before it waits for it to drain: a few events, so
 * reading the next one from execd overlaps with sending the last (a fast client keeps its speed)
 * while a slow one holds at most this plus one event.
 */
const maxPacedBytes = 256 * 1024;

/**
 * What a route plugin opens its event streams with. The streams still open are ended before the
 * server waits for its connections (`preClose`: an `onClose` hook would run after that wait), and
 * their connections closed once the end is sent, so none holds up a shutdown.
 */
export function eventStreams(app: FastifyInstance): (reply: FastifyReply) => EventStream {
  const open = new Map<EventStream, () => void>();
  app.addHook("preClose", async () => {
    for (const close of [...open.values()]) close();
  });
  return (reply) => {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      connection: "keep-alive",
    });
    res.flushHeaders();
    const controller = new AbortController();
    const writable = () => !res.writableEnded && !res.destroyed;
    const push = (text: string) => {
      if (!writable()) return;
      res.write(text);
      if (res.writableLength > maxBufferedBytes) stream.end();
    };
    /** Resolves on the next 'drain', or at once when the stream has ended. */
    const drained = () =>
      new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          controller.signal.removeEventListener("abort", done);
          resolve();
        };
        res.once("drain", done);
        controller.signal.addEventListener("abort", done, { once: true });
      });
    const stream: EventStream = {
      signal: controller.signal,
      send: (event) => push(encodeSse(event)),
      write: async (event) => {
        if (!writable()) return;
        res.write(encodeSse(event));
        if (res.writableLength > maxPacedBytes && !controller.signal.aborted) await drained();
      },
      comment: (text) => push(`: ${text}\n\n`),
      end: () => {
        open.delete(stream);
        controller.abort();
        if (!res.writableEnded) res.end();
      },
    };
    open.set(stream, () => {
      res.once("finish", () => res.socket?.destroy());
      stream.end();
    });
    res.on("close", stream.end);
    return stream;
  };
}

/** The last event of a stream that failed: the HTTP status, code and detail it would have answered. */
export function failureEvent(error: unknown): SseEvent {
  const failure = isPaddockError(error) ? error : new PaddockError(Errors.endpointUnavailable, String(error));
  return { type: "error", status: failure.status, code: failure.code, detail: failure.message };
}
