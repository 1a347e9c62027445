import { readFileSync } from "node:fs";

/** Where the kernel counts the processes of this sandbox it killed for memory (cgroup v2, v1). */
const counters = ["/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"];

/** The counter file that answered, null when none does; looked for once (syscalls are dear under gVisor). */
let counter: string | null | undefined;

/**
 * The kernel's count of processes in this sandbox's memory cgroup it killed for memory, or
 * undefined where no counter can be read (gVisor shows none: there the whole sandbox dies).
 */
export function memoryKills(): number | undefined {
  for (const file of counter === undefined ? counters : counter ? [counter] : []) {
    try {
      const found = /^oom_kill (\d+)$/m.exec(readFileSync(file, "utf8"));
      if (found) {
        counter = file;
        return Number(found[1]);
      }
    } catch {
      // Not this cgroup version.
    }
  }
  counter ??= null;
  return undefined;
}

/** What a command killed for memory reports as its error (`ename` OutOfMemory). */
export const outOfMemory =
  "killed by the kernel for memory: the sandbox reached its memory limit (create it with more memory)";

/**
 * Whether a command that ended with `exitCode` was killed for memory: by SIGKILL (137), while
 * the kernel's count rose. Another process killed at the same moment could be the one counted;
 * a SIGKILL of this command then is as likely the same cause.
 */
export function killedForMemory(exitCode: number, killsBefore: number | undefined): boolean {
  if (exitCode !== 137 || killsBefore === undefined) return false;
  return (memoryKills() ?? killsBefore) > killsBefore;
}
