import { Errors, encodeSse, isPaddockError, PaddockError, type SseEvent } from "@paddock/common";
import type { FastifyInstance, FastifyReply } from "fastify";

/** One server-sent event stream, open until the client leaves, the server closes or `end()`. */
export interface EventStream {
  send(event: SseEvent): void;
  /** An SSE comment line (`: text`), which clients ignore: keeps idle connections alive. */
  comment(text: string): void;
  end(): void;
  /** Aborted once the stream has ended, for whatever reason. */
  readonly signal: AbortSignal;
}

/**
 * A client reading slower than events come is dropped once this much waits for it (it reconnects
 * and reloads), rather than buffered without bound.
 */
const maxBufferedBytes = 1024 * 1024;

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
    const write = (text: string) => {
      if (res.writableEnded || res.destroyed) return;
      res.write(text);
      if (res.writableLength > maxBufferedBytes) stream.end();
    };
    const stream: EventStream = {
      signal: controller.signal,
      send: (event) => write(encodeSse(event)),
      comment: (text) => write(`: ${text}\n\n`),
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
