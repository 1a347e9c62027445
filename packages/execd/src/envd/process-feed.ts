import type { Message } from "./connect.js";

/** Output queued for one stream beyond which the process's output is paused (bytes). */
const highWater = 1024 * 1024;

/** Pauses and resumes the output a feed publishes. */
export interface Flow {
  pause(): void;
  resume(): void;
}

/**
 * One process's events fanned out to the streams that watch it (its Start stream, any Connect
 * streams). Each watcher has its own queue; a slow one pauses the process's output rather than
 * growing execd's memory. Events published while nobody watches are dropped, as envd drops
 * them: a Connect stream sees output from the moment it connects.
 */
export class EventFeed {
  private readonly watchers = new Set<Watcher>();
  private final: Message | undefined;
  private paused = false;

  constructor(private readonly flow: Flow) {}

  /** A new watcher; after the end it gets the last event alone. */
  watch(): Watcher {
    const watcher = new Watcher(
      () => this.settle(),
      (w) => this.unwatch(w),
    );
    if (this.final) watcher.finish(this.final);
    else this.watchers.add(watcher);
    return watcher;
  }

  publish(event: Message, bytes: number): void {
    for (const watcher of this.watchers) watcher.push(event, bytes);
    this.settle();
  }

  /** The process's last event: every watcher ends after it. */
  end(event: Message): void {
    this.final = event;
    for (const watcher of this.watchers) watcher.finish(event);
    this.watchers.clear();
    this.settle();
  }

  private unwatch(watcher: Watcher): void {
    this.watchers.delete(watcher);
    this.settle();
  }

  /** Pauses while any watcher is behind, resumes once none is. */
  private settle(): void {
    const behind = [...this.watchers].some((watcher) => watcher.pendingBytes > highWater);
    if (behind === this.paused) return;
    this.paused = behind;
    if (behind) this.flow.pause();
    else this.flow.resume();
  }
}

/** One stream's queue of a process's events. */
export class Watcher {
  pendingBytes = 0;
  private readonly queue: { event: Message; bytes: number }[] = [];
  private done = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly onTaken: () => void,
    private readonly onClose: (watcher: Watcher) => void,
  ) {}

  push(event: Message, bytes = 0): void {
    if (this.done) return;
    this.queue.push({ event, bytes });
    this.pendingBytes += bytes;
    this.wake?.();
  }

  finish(event: Message): void {
    this.push(event);
    this.done = true;
  }

  /** The next event, or undefined after the last; rejects with the reason when `signal` aborts. */
  async next(signal: AbortSignal): Promise<Message | undefined> {
    while (this.queue.length === 0) {
      if (this.done) return undefined;
      signal.throwIfAborted();
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          this.wake = undefined;
          resolve();
        };
        this.wake = wake;
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    const item = this.queue.shift() as { event: Message; bytes: number };
    this.pendingBytes -= item.bytes;
    if (item.bytes > 0) this.onTaken();
    return item.event;
  }

  /** Stops watching (the stream ended or its client went away). */
  close(): void {
    this.done = true;
    this.queue.length = 0;
    this.pendingBytes = 0;
    this.onClose(this);
  }
}
