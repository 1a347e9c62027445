import type { Sandbox, SandboxLifecycle } from "./api/types";
import { formatDuration } from "./format";

/**
 * A sandbox's state in words, with where it sleeps while paused: "Paused (memory)", or "Paused
 * (disk, processes restart on resume)" when a resume brings back its files only.
 */
export function stateLabel(sandbox: Pick<Sandbox, "state" | "pausedTo" | "memoryPreserved">): string {
  const { state, pausedTo, memoryPreserved } = sandbox;
  if (state === "Pausing" && pausedTo === "disk") return "Pausing (to disk)";
  if (state !== "Paused" || pausedTo === null) return state;
  if (pausedTo === "memory") return "Paused (memory)";
  return memoryPreserved ? "Paused (disk, memory kept)" : "Paused (disk, processes restart on resume)";
}

/** Whether the sandbox can go to disk now: running, or paused in memory. */
export function canPauseToDisk(sandbox: Pick<Sandbox, "state" | "pausedTo">): boolean {
  return sandbox.state === "Running" || (sandbox.state === "Paused" && sandbox.pausedTo === "memory");
}

/** A lifecycle policy as short sentences, one per setting. */
export function lifecycleLines(lifecycle: SandboxLifecycle): string[] {
  return [
    lifecycle.idleTimeout === null
      ? "Never pauses for want of use"
      : `Pauses after ${formatDuration(lifecycle.idleTimeout)} idle`,
    lifecycle.processesKeepAwake ? "Running processes count as use" : "Running processes do not count as use",
    lifecycle.autoResume ? "Resumes on use" : "Resumes only when asked",
    `At the end of its lifetime: ${lifecycle.onTimeout === "pause" ? "paused" : "killed"}`,
    lifecycle.keepMemory ? "Pause to disk keeps memory where it can" : "Pause to disk keeps files only",
    lifecycle.maxPaused === null
      ? "Kept however long it stays paused"
      : `Deleted after ${formatDuration(lifecycle.maxPaused)} paused`,
  ];
}
