import type { Writable } from "node:stream";

/** What output comes from: a process's pipe, a socket. */
export interface Pausable {
  pause(): void;
  resume(): void;
}

/** Resolves once `res` can take more ('drain'), or once it has gone ('close'): its client left, its process exited. */
export function drained(res: Writable): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/**
 * Backpressure from a client to the sources of its output: `full()` (after a write returned
 * false) pauses them until `whenDrained` resolves (the client has taken what waited, or left),
 * so a slow or absent reader blocks the producer in its own pipe instead of growing execd. The
 * caller decides whether a producer lives on once its client left; `release()` resumes at once
 * (a source shared with later runs, such as a session's shell, at the end of a run).
 */
export function backpressure(
  whenDrained: () => Promise<void>,
  sources: () => Array<Pausable | undefined | null>,
) {
  let paused = false;
  const release = () => {
    if (!paused) return;
    paused = false;
    for (const source of sources()) source?.resume();
  };
  return {
    full(): void {
      if (paused) return;
      paused = true;
      for (const source of sources()) source?.pause();
      void whenDrained().then(release);
    },
    release,
    get paused(): boolean {
      return paused;
    },
  };
}
