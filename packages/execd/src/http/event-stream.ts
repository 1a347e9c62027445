import type { ServerResponse } from "node:http";
import { openSseWriter } from "@paddock/common/sse-writer";
import type { EventStream } from "../streams/event-sink.js";

/**
 * A response as an event stream: execd's events carry `timestamp`; a client that is behind
 * pauses the source (no cap: every source here can be paused, see decision 0171).
 */
export function eventStream(res: ServerResponse): EventStream {
  const closed = new AbortController();
  if (res.destroyed) closed.abort();
  else res.once("close", () => closed.abort());
  return { open: () => openSseWriter(res, { timestamp: true }), closed: closed.signal };
}
