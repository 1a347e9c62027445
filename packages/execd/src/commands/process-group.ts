import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";

/** The shell commands run in: bash where the image has it. */
export const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

/** Signals a process's whole group (commands run detached, as group leaders). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const group = child.pid;
  if (group === undefined) return;
  try {
    process.kill(-group, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
    return;
  }
  // gVisor does not hold back a fork in flight when its group is killed, so a child forked at
  // that moment (a warm shell starting its command, say) can outlive the signal. Signal the group
  // again shortly after: its id stays reserved while any member lives, so nothing else is hit.
  if (signal === "SIGKILL") {
    for (const delay of [50, 500]) {
      setTimeout(() => {
        try {
          process.kill(-group, signal);
        } catch {
          // The group is empty.
        }
      }, delay).unref();
    }
  }
}

export function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGKILL: 9,
    SIGTERM: 15,
    SIGPIPE: 13,
  };
  return numbers[signal] ?? 0;
}
