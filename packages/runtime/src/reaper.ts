import type { Logger } from "@paddock/common";
import type { Lease } from "@paddock/db";
import type { SandboxRepository } from "./sandbox-repository.js";
import type { SandboxService } from "./sandbox-service.js";

/**
 * Deletes sandboxes whose expiry has passed. Expiry lives in the database, so it survives
 * restarts: a sandbox that expired while the server was down goes on the first sweep. Among
 * replicas, the holder of `lease` sweeps.
 */
export class ExpiryReaper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly repository: SandboxRepository,
    private readonly service: SandboxService,
    private readonly lease: Lease,
    private readonly logger: Logger,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep().finally(() => {
        this.sweeping = undefined;
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  async sweep(): Promise<void> {
    if (!this.lease.held()) return;
    const expired = await this.repository.expiredBefore(new Date().toISOString());
    for (const sandbox of expired) {
      try {
        await this.service.delete(sandbox.id, undefined, "ttl_expiry");
        this.logger.info({ sandboxId: sandbox.id }, "sandbox expired and was removed");
      } catch (error) {
        this.logger.warn({ sandboxId: sandbox.id, err: error }, "expiring sandbox failed");
      }
    }
  }
}
