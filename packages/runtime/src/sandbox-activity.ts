import type { Logger } from "@paddock/common";
import { idleAtFrom } from "./lifecycle.js";
import type { Sandbox } from "./model.js";
import type { SandboxRepository } from "./sandbox-repository.js";

/** Most sandboxes whose last write this replica remembers; older entries only cost an early write. */
const remembered = 10_000;

/**
 * Uses of sandboxes (decision 0190): each moves the sandbox's `idle_at` on. Written at most once
 * per 5 s per sandbox on this replica (sooner for idle timeouts under 20 s), so a busy sandbox
 * costs a row write per interval, not one per call.
 */
export class SandboxActivity {
  /** Per sandbox, what its last write counted from (a use's time, plus any hold). */
  private readonly lastWrite = new Map<string, number>();

  constructor(
    private readonly repository: SandboxRepository,
    private readonly logger: Logger,
  ) {}

  /**
   * `holdMs` keeps it awake that much longer than its idle timeout: for uses that are checks of
   * something still open, made every few seconds, which must not let it idle out in between.
   */
  used(sandbox: Sandbox, holdMs = 0): void {
    const now = Date.now();
    const interval = Math.min(5000, (sandbox.lifecycle.idleTimeout ?? Number.POSITIVE_INFINITY) * 250);
    // Written when it moves the idle time on by an interval, so a first hold is written at once.
    const awakeUntil = now + holdMs;
    if (awakeUntil - (this.lastWrite.get(sandbox.id) ?? 0) < interval) return;
    this.lastWrite.delete(sandbox.id);
    if (this.lastWrite.size >= remembered)
      this.lastWrite.delete(this.lastWrite.keys().next().value as string);
    this.lastWrite.set(sandbox.id, awakeUntil);
    const idleAt = idleAtFrom(sandbox.lifecycle, awakeUntil) ?? null;
    this.repository
      .touch(sandbox.id, new Date(now).toISOString(), idleAt)
      .catch((error) => this.logger.warn({ sandboxId: sandbox.id, err: error }, "recording a use failed"));
  }

  /** Forgets the last write, so the next use is written at once (after a pause or resume). */
  forget(sandboxId: string): void {
    this.lastWrite.delete(sandboxId);
  }
}
