import { type ChildProcess, spawn } from "node:child_process";
import { EGRESS_PORT } from "@paddock/common/contracts";
import type { Environment } from "./environment.js";

/**
 * Runs the sandbox's own entrypoint as execd's child, forwarding termination signals to it.
 * Its exit is logged and execd keeps serving: the sandbox lives until it is deleted.
 */
export function startEntrypoint(command: string[], env: Environment): ChildProcess | undefined {
  const [file, ...args] = command;
  if (!file) return undefined;
  const child = spawn(file, args, { env: env.forProcess(), stdio: "inherit" });
  child.on("error", (error) => console.error(`execd: entrypoint ${file} failed to start: ${error.message}`));
  child.on("exit", (code, signal) => console.error(`execd: entrypoint exited (${signal ?? code})`));
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (child.exitCode === null) child.kill(signal);
      if (signal !== "SIGHUP") setTimeout(() => process.exit(0), 100).unref();
    });
  }
  return child;
}

/** Holds until the egress sidecar in this network namespace reports its rules are in place. */
export async function waitForEgress(): Promise<void> {
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${EGRESS_PORT}/healthz`, {
        signal: AbortSignal.timeout(1000),
      });
      if (response.status === 200) return;
    } catch {
      // Not up yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
