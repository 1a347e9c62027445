import { type Logger, Periodic } from "@paddock/common";
import type { Lease } from "@paddock/db";
import type { SandboxState } from "./state-machine.js";
import type { UsageLedger } from "./usage-ledger.js";

/**
 * Meters the running time of account sandboxes from their state changes: entering Running opens
 * a meter, any other state closes it (so Paused, Pausing and Resuming cost nothing). A timer
 * writes open meters to the database every `checkpointIntervalMs`, which bounds what a crash can
 * lose, and re-syncs meters with sandbox states in case a meter write was lost. Among replicas,
 * the holder of `lease` checkpoints; every replica opens and closes meters for the moves it makes.
 */
export class UsageMeter {
  private readonly checkpoints: Periodic;

  constructor(
    private readonly ledger: UsageLedger,
    private readonly logger: Logger,
    checkpointIntervalMs: number,
    private readonly lease: Lease,
  ) {
    this.checkpoints = new Periodic(
      () => this.checkpoint(),
      checkpointIntervalMs,
      (error) => this.logger.warn({ err: error }, "usage checkpoint failed"),
    );
  }

  /** Called by the sandbox repository after each state change it writes (deletion: Terminated). */
  readonly stateChanged = async (sandboxId: string, state: SandboxState): Promise<void> => {
    try {
      if (state === "Running") await this.ledger.openIfRunning(sandboxId);
      else await this.ledger.close(sandboxId);
    } catch (error) {
      // Metering never fails a lifecycle operation; the next checkpoint's sync repairs the meter.
      this.logger.warn({ sandboxId, state, err: error }, "usage meter write failed");
    }
  };

  /**
   * On startup, before reconciliation. When no other replica was running, meters restart from now
   * (downtime is not counted); when one was, it was watching, and the meters stand.
   */
  async recover(othersAlive: boolean): Promise<void> {
    if (!othersAlive) await this.ledger.restartMeters();
    await this.ledger.sync();
  }

  start(): void {
    this.checkpoints.start();
  }

  /** Stops the timer and writes a last checkpoint, so a clean shutdown loses nothing. */
  async stop(): Promise<void> {
    await this.checkpoints.stop();
    await this.checkpoint();
  }

  async checkpoint(): Promise<void> {
    if (!this.lease.held()) return;
    try {
      await this.ledger.sync();
      await this.ledger.checkpoint();
    } catch (error) {
      this.logger.warn({ err: error }, "usage checkpoint failed");
    }
  }
}
