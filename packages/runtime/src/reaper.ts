import { type Logger, Periodic } from "@paddock/common";
import type { Lease } from "@paddock/db";
import type { SandboxRepository } from "./sandbox-repository.js";
import type { SandboxService } from "./sandbox-service.js";

/**
 * Deletes sandboxes whose expiry has passed. Expiry lives in the database, so it survives
 * restarts: a sandbox that expired while the server was down goes on the first sweep. Among
 * replicas, the holder of `lease` sweeps.
 */
export class ExpiryReaper {
  private readonly sweeps: Periodic;

  constructor(
    private readonly repository: SandboxRepository,
    private readonly service: SandboxService,
    private readonly lease: Lease,
    private readonly logger: Logger,
    intervalMs = 1000,
  ) {
    this.sweeps = new Periodic(() => this.sweep(), intervalMs);
  }

  start(): void {
    this.sweeps.start();
  }

  async stop(): Promise<void> {
    await this.sweeps.stop();
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
