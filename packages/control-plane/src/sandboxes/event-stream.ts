import { Errors, isPaddockError, PaddockError, type SseEvent } from "@paddock/common";
import { SseStreams, type SseWriter } from "@paddock/common/sse-writer";
import type { FastifyInstance, FastifyReply } from "fastify";

/**
 * One server-sent event stream, open until the client leaves, the server closes or `end()`: the
 * common writer (`send` for producers that cannot wait, dropped `maxBufferedBytes` behind;
 * `write` for those that can, paced; see decision 0171).
 */
export type EventStream = Omit<SseWriter, "send"> & { send(event: SseEvent): void };

/**
 * A client reading slower than unpausable events come is dropped once this much waits for it
 * (it reconnects and reloads), rather than buffered without bound.
 */
export const maxBufferedBytes = 1024 * 1024;

/**
 * What a route plugin opens its event streams with. The streams still open are ended before the
 * server waits for its connections (`preClose`: an `onClose` hook would run after that wait), and
 * their connections closed once the end is sent, so none holds up a shutdown.
 */
export function eventStreams(app: FastifyInstance): (reply: FastifyReply) => EventStream {
  const streams = new SseStreams({ maxBufferedBytes });
  app.addHook("preClose", async () => streams.closeAll());
  return (reply) => {
    reply.hijack();
    return streams.start(reply.raw);
  };
}

/** The last event of a stream that failed: the HTTP status, code and detail it would have answered. */
export function failureEvent(error: unknown): SseEvent {
  const failure = isPaddockError(error) ? error : new PaddockError(Errors.endpointUnavailable, String(error));
  return { type: "error", status: failure.status, code: failure.code, detail: failure.message };
}
