import type { SseEvent } from "@paddock/common/sse";

/** Where a streaming operation writes its events: a server-sent-events response behind it (http/). */
export interface EventSink {
  /** Reports false once the client is behind: pause the source until `drained()`. */
  send(event: SseEvent): boolean;
  /** Several events already encoded as SSE bytes, in one write (commands/output-events.ts). */
  sendEncoded(events: Uint8Array): boolean;
  /** Resolves once the client has taken what waits for it, or has left. */
  drained(): Promise<void>;
  end(): void;
}

/**
 * A streaming request's way out before its stream starts. `open()` is called once, when nothing
 * can refuse the request any more: what is thrown before it is answered as an error. `closed`
 * aborts when the client's connection closes (the answer sent, or the client gone), whether or
 * not the stream was opened.
 */
export interface EventStream {
  open(): EventSink;
  readonly closed: AbortSignal;
}
