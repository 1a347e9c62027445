/** How a container ended, as the engine's record tells it. */
export interface EndedContainer {
  containerId: string;
  exitCode: number;
  /** When the engine saw it end (its clock, ms since the epoch). */
  finishedAtMs: number;
  /** The engine's own flag (Docker's `State.OOMKilled`). */
  engineSaysOom: boolean;
}

/**
 * Decides once per container whether it was killed for memory, so every caller (the exit
 * watcher, a command whose stream broke, a later inspect) gets the same answer.
 *
 * The evidence comes in pieces that race. Docker's `oom` event may come after its `die` one, and
 * then `State.OOMKilled` stays false for good (it is taken from the events seen before the exit).
 * The exit code is no evidence either: under gVisor the kernel kills the sandbox's Sentry, and
 * the container ends with 137 or 2 depending on how runsc saw it go. So a container that ended
 * with a non-zero code and no evidence yet is given `graceMs` after its end for an `oom` event to
 * arrive (an exit with 0 is a clean end, never a kill). An `oom` event counts only near the end
 * (within `beforeMs` before it): under runc the kernel may kill one process of a sandbox that
 * lives on, and a later, unrelated end of the container is not a memory kill.
 */
export class MemoryKills {
  /** When the engine reported an `oom` for each container (its clock, ms). */
  private readonly oomAt = new Map<string, number>();
  private readonly waiting = new Map<string, () => void>();
  private readonly decided = new Map<string, Promise<boolean>>();

  constructor(
    private readonly options: { graceMs: number; beforeMs: number; now?: () => number } = {
      graceMs: 3000,
      beforeMs: 10_000,
    },
  ) {}

  /** The engine reported that the kernel killed a process of the container for memory. */
  noteOom(containerId: string, atMs: number): void {
    this.oomAt.set(containerId, atMs);
    this.waiting.get(containerId)?.();
  }

  /** The container is gone from the engine: nothing more to remember about it. */
  forget(containerId: string): void {
    this.oomAt.delete(containerId);
    this.decided.delete(containerId);
  }

  /** Whether the ended container was killed for memory; the first call decides for all. */
  killedForMemory(ended: EndedContainer): Promise<boolean> {
    let decision = this.decided.get(ended.containerId);
    if (!decision) {
      decision = this.decide(ended);
      this.decided.set(ended.containerId, decision);
      // Bounded: entries of containers removed behind this process's back go eventually.
      if (this.decided.size > 10_000) this.forget(this.decided.keys().next().value as string);
    }
    return decision;
  }

  private async decide(ended: EndedContainer): Promise<boolean> {
    if (ended.exitCode === 0) return false;
    if (ended.engineSaysOom || this.oomNear(ended)) return true;
    const now = this.options.now?.() ?? Date.now();
    const left = Math.min(this.options.graceMs, ended.finishedAtMs + this.options.graceMs - now);
    if (left > 0) await this.oomWithin(ended.containerId, left);
    return this.oomNear(ended);
  }

  private oomNear(ended: EndedContainer): boolean {
    const at = this.oomAt.get(ended.containerId);
    return at !== undefined && at >= ended.finishedAtMs - this.options.beforeMs;
  }

  /** Resolves when an `oom` event for the container arrives, or after `ms`. */
  private oomWithin(containerId: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiting.set(containerId, done);
    }).finally(() => this.waiting.delete(containerId));
  }
}
