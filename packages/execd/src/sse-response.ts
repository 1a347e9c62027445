import type { ServerResponse } from "node:http";
import { encodeSse, type SseEvent } from "@paddock/common/sse";

/** Starts an SSE response. `send` reports false when the client's buffer is full (wait for drain). */
export function openSse(res: ServerResponse): { send: (event: SseEvent) => boolean; end: () => void } {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  return {
    send: (event) => (res.writableEnded ? false : res.write(encodeSse({ ...event, timestamp: Date.now() }))),
    end: () => {
      if (!res.writableEnded) res.end();
    },
  };
}
