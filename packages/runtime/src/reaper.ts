import { type Logger, Periodic } from "@paddock/common";
import type { Lease } from "@paddock/db";
import type { Sandbox } from "./model.js";
import type { SandboxRepository } from "./sandbox-repository.js";
import type { SandboxService } from "./sandbox-service.js";

/**
 * Carries out every sandbox's lifecycle (decisions 0001 and 0190), from the database, so it
 * holds across restarts; among replicas, the holder of `lease` sweeps. Each sweep:
 * - a Running sandbox past its expiry is deleted, or paused when its `onTimeout` is "pause"
 *   (a paused sandbox's timeout does not run: a resume re-arms an expiry that passed meanwhile);
 * - a Running sandbox past its `idle_at` is paused, unless execd still has work in hand;
 * - a sandbox paused in memory for `diskPauseAfterMs` moves to disk;
 * - a sandbox paused past its `maxPaused` is deleted.
 */
export class LifecycleReaper {
  private readonly sweeps: Periodic;

  constructor(
    private readonly repository: SandboxRepository,
    private readonly service: SandboxService,
    private readonly lease: Lease,
    private readonly logger: Logger,
    private readonly diskPauseAfterMs: number,
    intervalMs = 1000,
  ) {
    this.sweeps = new Periodic(
      () => this.sweep(),
      intervalMs,
      (error) => this.logger.warn({ err: error }, "lifecycle sweep failed"),
    );
  }

  start(): void {
    this.sweeps.start();
  }

  async stop(): Promise<void> {
    await this.sweeps.stop();
  }

  async sweep(): Promise<void> {
    if (!this.lease.held()) return;
    const now = new Date();
    const iso = now.toISOString();
    for (const sandbox of await this.repository.expiredBefore(iso)) await this.expire(sandbox);
    for (const sandbox of await this.repository.idleBefore(iso)) {
      await this.attempt(sandbox, "pausing an idle sandbox", async () => {
        if (await this.service.busy(sandbox)) return;
        await this.service.pause(sandbox.id, undefined, { cause: "idle" });
        this.logger.info({ sandboxId: sandbox.id }, "idle sandbox paused");
      });
    }
    if (this.diskPauseAfterMs > 0) {
      const since = new Date(now.getTime() - this.diskPauseAfterMs).toISOString();
      for (const sandbox of await this.repository.pausedInMemorySince(since)) {
        await this.attempt(sandbox, "moving a paused sandbox to disk", () =>
          this.service.pause(sandbox.id, undefined, { to: "disk", cause: "disk" }),
        );
      }
    }
    for (const sandbox of await this.repository.pausedPastRetention(iso)) {
      await this.attempt(sandbox, "deleting a sandbox paused too long", () =>
        this.service.delete(sandbox.id, undefined, "paused_retention"),
      );
    }
  }

  private async expire(sandbox: Sandbox): Promise<void> {
    if (sandbox.lifecycle.onTimeout === "kill" || sandbox.status.state === "Failed") {
      await this.attempt(sandbox, "expiring a sandbox", async () => {
        await this.service.delete(sandbox.id, undefined, "ttl_expiry");
        this.logger.info({ sandboxId: sandbox.id }, "sandbox expired and was removed");
      });
      return;
    }
    // onTimeout "pause": the expiry is spent (a resume re-arms it), and the sandbox pauses.
    await this.attempt(sandbox, "pausing an expired sandbox", async () => {
      await this.service.pause(sandbox.id, undefined, { cause: "timeout" });
      await this.repository.setExpiresAt(sandbox.id, null);
    });
  }

  private async attempt(sandbox: Sandbox, what: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.logger.warn({ sandboxId: sandbox.id, err: error }, `${what} failed`);
    }
  }
}
