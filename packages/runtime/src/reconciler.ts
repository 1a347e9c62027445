import { type Logger, Periodic } from "@paddock/common";
import type { Lease } from "@paddock/db";
import { ExecdClient } from "./execd/client.js";
import type { LifecycleLog } from "./lifecycle-log.js";
import { defaultLifecycle, type PauseDepth, type Sandbox } from "./model.js";
import { probe } from "./readiness.js";
import type { Runtime, WorkloadSummary } from "./runtime.js";
import type { SandboxRepository } from "./sandbox-repository.js";
import { recordLabel, type SandboxService } from "./sandbox-service.js";
import type { SnapshotRepository } from "./snapshot-repository.js";
import type { SandboxState } from "./state-machine.js";

export interface ReconcilerDeps {
  runtime: Runtime;
  sandboxes: SandboxRepository;
  snapshots: SnapshotRepository;
  service: SandboxService;
  log: LifecycleLog;
  logger: Logger;
  /** Replicas alive now: a move left unfinished by one of them is still in progress. */
  liveReplicas: () => Promise<Set<string>>;
}

/** States a sandbox passes through while a replica works on it. */
const moving: SandboxState[] = ["Pending", "Stopping", "Pausing", "Resuming"];

/**
 * Brings the database and the engine back into agreement, at startup and then periodically (one
 * replica at a time, under a lease). A move in progress on a live replica is left to it; what a
 * dead replica (or a crashed server) left unfinished is settled here:
 * - a create that was in flight (Pending) is undone: its caller never got the id;
 * - an interrupted delete is finished; interrupted pause/resume settle on what the engine shows;
 * - a record whose container vanished or exited becomes Failed;
 * - a container the database does not know is adopted when it carries its record, else removed;
 * - a snapshot that was being captured is marked Failed.
 * The engine is listed before the database is read, so a mismatch may only mean the record moved
 * on since: it is confirmed against the engine's present state before anything changes.
 */
export async function reconcile(
  deps: ReconcilerDeps,
): Promise<{ adopted: number; removed: number; failed: number }> {
  const { runtime, sandboxes, logger } = deps;
  const counts = { adopted: 0, removed: 0, failed: 0 };
  const workloads = new Map<string, WorkloadSummary>();
  for (const workload of await runtime.listWorkloads()) workloads.set(workload.sandboxId, workload);
  // Records, then who moved them, then who lives, in that order: a record inserted in between is
  // not among the records, one moved in between names its newer mover, and every mover that
  // lives (a replica holds its lease before it moves anything) is among the living.
  const records = await sandboxes.findAll({ includePooled: true });
  const movers = await sandboxes.movers();
  const live = await deps.liveReplicas();

  for (const sandbox of records) {
    const workload = workloads.get(sandbox.id);
    workloads.delete(sandbox.id);
    const state = sandbox.status.state;
    const mover = movers.get(sandbox.id);
    if (moving.includes(state) && mover && live.has(mover)) continue;

    if (state === "Pending") {
      // A create answers its caller only after it leaves Pending: no client knows this id, so
      // the sandbox is undone (even when its execd answers) rather than left to run and bill.
      await runtime.removeWorkload(sandbox.id);
      await sandboxes.remove(sandbox.id);
      await deps.log.forget(sandbox.id);
      counts.removed++;
    } else if (state === "Stopping") {
      await deps.service.delete(sandbox.id, undefined, "delete_resumed_after_restart");
      counts.removed++;
    } else if (state === "Running" || state === "Paused" || state === "Pausing" || state === "Resuming") {
      // Paused to disk, its container stopped on purpose (decision 0190).
      const onDisk = sandbox.pause?.to === "disk";
      if (
        (state === "Running" && workload?.state === "running") ||
        (state === "Paused" && workload?.state === (onDisk ? "exited" : "paused"))
      )
        continue;
      // The listing may predate the record (a create or resume finished since): ask again.
      const status = await runtime.inspectWorkload(sandbox.id);
      const engine = status.state;
      if (engine === "exited" && status.oomKilled) {
        // The same answer the exit watcher gives, whichever of the two writes first.
        await deps.service.markExited(sandbox.id, { exitCode: status.exitCode, oomKilled: true });
        counts.failed++;
        continue;
      }
      if (engine === "missing" || (engine === "exited" && !onDisk)) {
        const reason = engine === "exited" ? "container_exited" : "container_vanished";
        const failed = await sandboxes.setState(sandbox.id, state, "Failed", {
          reason,
          message:
            engine === "exited"
              ? "the sandbox's container exited while no server was watching it"
              : "the sandbox's container no longer exists",
        });
        if (failed) {
          await deps.log.record(sandbox.id, "Failed", reason);
          // What it left beside its container (egress sidecar, network files) goes with it.
          if (engine === "missing") await runtime.removeWorkload(sandbox.id);
          counts.failed++;
        }
        continue;
      }
      const actual = engine === "running" ? "Running" : "Paused";
      if (actual === state) continue;
      // Through the state machine: Paused and Running are two moves apart (via Resuming or
      // Pausing), and the intermediate states reach either end in one. Each move is a
      // compare-and-set, so a record that moved on meanwhile is left as it is. A stopped
      // container of a sandbox on its way to or from disk is asleep there, its files kept, and
      // its memory too when its checkpoint was written.
      const depth: PauseDepth | null =
        actual === "Running"
          ? null
          : engine === "exited"
            ? { to: "disk", memoryPreserved: status.checkpointed === true }
            : { to: "memory" };
      let settled = true;
      for (const [from, to] of settlingPath(state, actual))
        settled &&= await sandboxes.setState(sandbox.id, from, to, {
          reason: "reconciled",
          ...(to === actual ? { pause: depth } : {}),
        });
      if (settled) await deps.log.record(sandbox.id, actual, `settled by the reconciler (was ${state})`);
    }
  }

  for (const workload of workloads.values()) {
    const record = parseRecord(workload.labels[recordLabel]);
    if (record && workload.state === "running" && (await execdAnswers(deps, workload.sandboxId))) {
      const now = new Date().toISOString();
      await sandboxes.insert({
        entrypoint: [],
        metadata: {},
        extensions: {},
        resourceLimits: {},
        secureAccess: false,
        lifecycle: defaultLifecycle,
        ...record,
        id: workload.sandboxId,
        owner: record.owner ?? null,
        status: { state: "Running", reason: "adopted", lastTransitionAt: now },
        containerId: workload.containerId,
        createdAt: record.createdAt ?? now,
        updatedAt: now,
      });
      await deps.log.record(
        workload.sandboxId,
        "Running",
        "adopted a running container the database did not know",
      );
      counts.adopted++;
    } else {
      await runtime.removeWorkload(workload.sandboxId);
      counts.removed++;
    }
  }

  const movingSnapshots = await deps.snapshots.findAll({ states: ["Creating", "Deleting"] });
  const snapshotMovers = await deps.snapshots.movers();
  const stillLive = await deps.liveReplicas();
  for (const snapshot of movingSnapshots) {
    const mover = snapshotMovers.get(snapshot.id);
    if (mover && stillLive.has(mover)) continue;
    await deps.snapshots.setState(snapshot.id, [snapshot.status.state], "Failed", {
      reason: "interrupted",
      message: "the server stopped while this snapshot was being changed",
    });
  }
  if (counts.adopted || counts.removed || counts.failed)
    logger.info(counts, "reconciled sandboxes with the engine");
  return counts;
}

/**
 * Reconciles every `intervalMs` while this replica holds `lease`, and as soon as it takes the
 * lease over (from a replica that died, whose unfinished work is now to be settled).
 */
export class Reconciler {
  private readonly passes: Periodic;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly lease: Lease,
    intervalMs: number,
  ) {
    this.passes = new Periodic(
      () => this.pass(),
      intervalMs,
      (error) => this.deps.logger.warn({ err: error }, "reconciliation failed"),
    );
  }

  /** Runs a pass now (when the lease is held), then every interval. */
  start(): void {
    this.passes.start();
    this.runSoon();
  }

  /** Starts a pass unless one is running, the reconciler is not started, or the lease is another replica's. */
  runSoon(): void {
    if (this.passes.started) this.passes.runSoon();
  }

  /** Resolves when the pass in progress, if any, is done. */
  async settled(): Promise<void> {
    await this.passes.settled();
  }

  async stop(): Promise<void> {
    await this.passes.stop();
  }

  private async pass(): Promise<void> {
    if (!this.lease.held()) return;
    await reconcile(this.deps).then(
      () => undefined,
      (error: unknown) => this.deps.logger.warn({ err: error }, "reconciliation failed"),
    );
  }
}

async function execdAnswers(deps: ReconcilerDeps, sandboxId: string): Promise<boolean> {
  const status = await deps.runtime.inspectWorkload(sandboxId);
  if (!status.address) return false;
  const ping = ExecdClient.ping(status.address, deps.service.tokens(sandboxId).execd);
  return (await probe(ping.url, ping.headers, 2000)) === 200;
}

function parseRecord(label: string | undefined): (Partial<Sandbox> & { createdAt?: string }) | undefined {
  if (!label) return undefined;
  try {
    const parsed = JSON.parse(label) as Partial<Sandbox>;
    return parsed && typeof parsed === "object" && typeof parsed.id === "string" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The legal moves from a recorded state to the one the engine shows. */
function settlingPath(from: SandboxState, to: "Running" | "Paused"): Array<[SandboxState, SandboxState]> {
  if (from === "Paused" && to === "Running")
    return [
      ["Paused", "Resuming"],
      ["Resuming", "Running"],
    ];
  if (from === "Running" && to === "Paused")
    return [
      ["Running", "Pausing"],
      ["Pausing", "Paused"],
    ];
  return [[from, to]];
}
