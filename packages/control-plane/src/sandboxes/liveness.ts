import { Errors, EXECD_PORT, isPaddockError, PaddockError } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";

/**
 * How often a stream from a sandbox asks whether the sandbox still runs. A deleted sandbox's
 * connections can vanish with its network namespace without a FIN (so under gVisor), and a
 * paused one's stay open but silent: neither ends the stream by itself. (The proxies ask as
 * often: runtime-api proxy.ts.)
 */
const intervalMs = 2000;

/**
 * Calls `stopped` once with the error the sandbox would answer now (deleted: sandbox_not_found;
 * paused: invalid_state; killed: its exit cause) when it no longer runs. Returns what stops asking.
 */
export function whileRunning(
  sandboxes: SandboxOperations,
  id: string,
  owner: string,
  stopped: (reason: PaddockError) => void,
): () => void {
  let asking = false;
  const timer = setInterval(async () => {
    if (asking) return;
    asking = true;
    const reason = await whyNotRunning(sandboxes, id, owner).finally(() => {
      asking = false;
    });
    if (reason) {
      clearInterval(timer);
      stopped(reason);
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The error the sandbox would answer now if it no longer runs; undefined while it runs. */
export async function whyNotRunning(
  sandboxes: SandboxOperations,
  id: string,
  owner: string,
): Promise<PaddockError | undefined> {
  try {
    const { state } = (await sandboxes.get(id, owner)).status;
    if (state === "Stopping") return new PaddockError(Errors.sandboxNotFound, `sandbox ${id} was deleted`);
    // Answers while Running; otherwise throws why not (Paused, Failed with its exit cause).
    await sandboxes.target(id, EXECD_PORT, owner);
    return undefined;
  } catch (error) {
    // A refusal is the answer; a failure to find out (the database or the engine busy) is asked
    // again next time.
    return isPaddockError(error) && error.status < 500 ? error : undefined;
  }
}
