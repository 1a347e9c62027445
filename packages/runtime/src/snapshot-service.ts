import { Errors, type Logger, newId, PaddockError, type Page, paginate } from "@paddock/common";
import type { Snapshot, SnapshotFilter } from "./model.js";
import type { Runtime } from "./runtime.js";
import type { SnapshotOperations } from "./sandbox-operations.js";
import type { SandboxRepository } from "./sandbox-repository.js";
import type { SnapshotRepository } from "./snapshot-repository.js";

export interface SnapshotServiceDeps {
  runtime: Runtime;
  sandboxes: SandboxRepository;
  snapshots: SnapshotRepository;
  logger: Logger;
  track: (work: Promise<unknown>) => void;
}

/** Snapshots: a Running sandbox's filesystem captured as an image (Creating → Ready | Failed). */
export class SnapshotService implements SnapshotOperations {
  constructor(private readonly deps: SnapshotServiceDeps) {}

  async create(sandboxId: string, options: { name?: string }, owner?: string | null): Promise<Snapshot> {
    const sandbox = await this.deps.sandboxes.find(sandboxId);
    if (!sandbox || (owner !== undefined && sandbox.owner !== owner)) {
      throw new PaddockError(Errors.sandboxNotFound, `no sandbox ${sandboxId}`);
    }
    if (sandbox.status.state !== "Running") {
      throw new PaddockError(
        Errors.invalidStateTransition,
        `cannot snapshot a sandbox that is ${sandbox.status.state}; it must be Running`,
      );
    }
    const refused = this.deps.runtime.unavailable("snapshot");
    if (refused) throw refused;
    const now = new Date().toISOString();
    const snapshot: Snapshot = {
      id: newId("snap"),
      owner: sandbox.owner,
      sandboxId,
      ...(options.name ? { name: options.name } : {}),
      status: { state: "Creating", reason: "snapshot_accepted", lastTransitionAt: now },
      entrypoint: sandbox.entrypoint,
      createdAt: now,
    };
    await this.deps.snapshots.insert(snapshot);
    this.deps.track(this.capture(snapshot));
    return snapshot;
  }

  private async capture(snapshot: Snapshot): Promise<void> {
    try {
      const imageRef = await this.deps.runtime.snapshotWorkload(snapshot.sandboxId, snapshot.id);
      const moved = await this.deps.snapshots.setState(snapshot.id, ["Creating"], "Ready", {
        reason: "snapshot_ready",
        imageRef,
      });
      if (!moved) await this.deps.runtime.removeSnapshotImage(imageRef);
    } catch (error) {
      this.deps.logger.warn({ snapshotId: snapshot.id, err: error }, "snapshot capture failed");
      await this.deps.snapshots.setState(snapshot.id, ["Creating"], "Failed", {
        reason: "snapshot_capture_failed",
        message: String((error as Error).message),
      });
    }
  }

  async get(id: string, owner?: string | null): Promise<Snapshot> {
    const snapshot = await this.deps.snapshots.find(id);
    if (!snapshot || (owner !== undefined && snapshot.owner !== owner)) {
      throw new PaddockError(Errors.snapshotNotFound, `no snapshot ${id}`);
    }
    return snapshot;
  }

  async list(filter: SnapshotFilter): Promise<Page<Snapshot>> {
    return paginate(await this.deps.snapshots.findAll(filter), filter.page, filter.pageSize);
  }

  async delete(id: string, owner?: string | null): Promise<void> {
    const snapshot = await this.get(id, owner);
    if (snapshot.status.state === "Creating") {
      throw new PaddockError(
        Errors.snapshotBusy,
        `snapshot ${id} is still being created; delete it once it is Ready or Failed`,
      );
    }
    if (!(await this.deps.snapshots.setState(id, ["Ready", "Failed", "Deleting"], "Deleting"))) {
      throw new PaddockError(Errors.snapshotBusy, `snapshot ${id} changed state; retry`);
    }
    if (snapshot.imageRef) await this.deps.runtime.removeSnapshotImage(snapshot.imageRef);
    await this.deps.snapshots.remove(id);
  }
}
