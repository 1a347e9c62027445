import { Errors, PaddockError } from "@paddock/common";
import { sandboxStates } from "@paddock/common/contracts";

export type SandboxState = (typeof sandboxStates)[number];

/**
 * The sandbox lifecycle: every state change anywhere in Paddock goes through `transition`,
 * so the allowed moves live in this one table.
 */
const transitions: Record<SandboxState, readonly SandboxState[]> = {
  Pending: ["Running", "Stopping", "Failed"],
  Running: ["Pausing", "Stopping", "Failed"],
  Pausing: ["Paused", "Running", "Stopping", "Failed"],
  // Paused → Pausing: a sandbox paused in memory moving to disk (decision 0190).
  Paused: ["Resuming", "Pausing", "Stopping", "Failed"],
  Resuming: ["Running", "Paused", "Stopping", "Failed"],
  Stopping: ["Terminated", "Failed"],
  Terminated: [],
  Failed: ["Stopping"],
};

export function canTransition(from: SandboxState, to: SandboxState): boolean {
  return transitions[from].includes(to);
}

/** A move the table does not allow: a 409 `invalid_state` naming both states. */
export class InvalidTransitionError extends PaddockError {
  constructor(
    readonly from: SandboxState,
    readonly to: SandboxState,
    message: string,
  ) {
    super(Errors.invalidStateTransition, message);
    this.name = "InvalidTransitionError";
  }
}

/** Throws a 409 naming the current state when the move is not allowed. */
export function assertTransition(from: SandboxState, to: SandboxState, operation: string): void {
  if (!canTransition(from, to)) {
    throw new InvalidTransitionError(from, to, `cannot ${operation} a sandbox that is ${from}`);
  }
}

export function isSandboxState(value: string): value is SandboxState {
  return (sandboxStates as readonly string[]).includes(value);
}

/** States in which the sandbox's container exists and may be holding resources. */
export function isLive(state: SandboxState): boolean {
  return state !== "Terminated";
}

export const snapshotStates = ["Creating", "Ready", "Failed", "Deleting"] as const;
export type SnapshotState = (typeof snapshotStates)[number];
