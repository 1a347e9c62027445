import { EXECD_PORT, EXECD_TOKEN_HEADER, type Logger } from "@paddock/common";
import type { LifecycleLog } from "./lifecycle-log.js";
import type { Sandbox } from "./model.js";
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
}

/**
 * Brings the database and the engine back into agreement after a restart or crash:
 * - a create that was in flight (Pending) is undone: its caller never got the id;
 * - an interrupted delete is finished; interrupted pause/resume settle on what the engine shows;
 * - a record whose container vanished or exited becomes Failed;
 * - a container the database does not know is adopted when it carries its record, else removed;
 * - a snapshot that was being captured is marked Failed.
 */
export async function reconcile(
  deps: ReconcilerDeps,
): Promise<{ adopted: number; removed: number; failed: number }> {
  const { runtime, sandboxes, logger } = deps;
  const counts = { adopted: 0, removed: 0, failed: 0 };
  const workloads = new Map<string, WorkloadSummary>();
  for (const workload of await runtime.listWorkloads()) workloads.set(workload.sandboxId, workload);

  for (const sandbox of await sandboxes.findAll({ includePooled: true })) {
    const workload = workloads.get(sandbox.id);
    workloads.delete(sandbox.id);
    const state = sandbox.status.state;
    const live = workload?.state === "running" || workload?.state === "paused";

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
    } else if (
      (state === "Running" || state === "Paused" || state === "Pausing" || state === "Resuming") &&
      !live
    ) {
      const reason = workload ? "container_exited" : "container_vanished";
      await sandboxes.setState(sandbox.id, state, "Failed", {
        reason,
        message: workload
          ? "the sandbox's container exited while the server was away"
          : "the sandbox's container no longer exists",
      });
      await deps.log.record(sandbox.id, "Failed", reason);
      counts.failed++;
    } else if (state === "Pausing" || state === "Resuming" || state === "Running" || state === "Paused") {
      const actual = workload?.state === "paused" ? "Paused" : "Running";
      if (actual !== state) {
        // Through the state machine: Paused and Running are two moves apart (via Resuming or
        // Pausing), and the intermediate states reach either end in one.
        const via = settlingPath(state, actual);
        for (const [from, to] of via)
          await sandboxes.setState(sandbox.id, from, to, { reason: "reconciled" });
        await deps.log.record(sandbox.id, actual, `settled after restart (was ${state})`);
      }
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

  for (const snapshot of await deps.snapshots.findAll({ states: ["Creating", "Deleting"] })) {
    await deps.snapshots.setState(snapshot.id, [snapshot.status.state], "Failed", {
      reason: "interrupted",
      message: "the server stopped while this snapshot was being changed",
    });
  }
  if (counts.adopted || counts.removed || counts.failed)
    logger.info(counts, "reconciled sandboxes with the engine");
  return counts;
}

async function execdAnswers(deps: ReconcilerDeps, sandboxId: string): Promise<boolean> {
  const status = await deps.runtime.inspectWorkload(sandboxId);
  if (!status.address) return false;
  const token = deps.service.tokens(sandboxId).execd;
  return (
    (await probe(`http://${status.address}:${EXECD_PORT}/ping`, { [EXECD_TOKEN_HEADER]: token }, 2000)) ===
    200
  );
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
