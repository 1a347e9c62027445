import type { EventStream } from "../streams/event-sink.js";
import type { CellSink } from "./cells.js";

/**
 * A `/code` run's event stream: opened when its cell starts (what is refused before that is
 * answered as an error), `init` first, `execution_complete` last unless the cell failed.
 */
export function cellStream(stream: EventStream): CellSink & { end(): void } {
  let sse: ReturnType<EventStream["open"]> | undefined;
  let failed = false;
  const started = Date.now();
  return {
    start(contextId) {
      sse = stream.open();
      sse.send({ type: "init", text: contextId });
    },
    event(event) {
      if (event.type === "error") failed = true;
      // /code's results are bare MIME bundles.
      return sse?.send(event.type === "result" ? { type: "result", results: event.results } : event);
    },
    drained: () => sse?.drained() ?? Promise.resolve(),
    end() {
      if (!failed) sse?.send({ type: "execution_complete", execution_time: Date.now() - started });
      sse?.end();
    },
  };
}
