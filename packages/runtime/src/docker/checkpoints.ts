import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import type Docker from "dockerode";

/**
 * The one checkpoint a sandbox has while paused to disk with its memory. It lives where Docker
 * keeps checkpoints, in the container's own directory (`<docker root>/containers/<id>/checkpoints`):
 * it outlives this server, and goes when the container is removed with the sandbox.
 */
export const checkpointName = "paddock-pause";

/**
 * Why runc sandboxes cannot be checkpointed here, or "" when they can (decision 0196): runc
 * checkpoints with the `criu` it finds on its PATH, through Docker's checkpoint API, which only
 * an engine in experimental mode serves. `criu check` fails on kernels newer than the CRIU (3.17,
 * Debian 12's, on 6.13 and later); `make setup` installs one that passes in /usr/local/sbin.
 */
export async function runcCheckpointProblem(info: { ExperimentalBuild?: boolean }): Promise<string> {
  if (!info.ExperimentalBuild) return 'the Docker engine is not in experimental mode ("experimental": true)';
  try {
    await promisify(execFile)("criu", ["check"], { timeout: 20_000 });
    return "";
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    const why = (stderr ?? "").trim().split("\n").at(-1) || message;
    return `\`criu check\` failed: ${why}`;
  }
}

/** Docker's checkpoint calls, which dockerode makes but does not type. */
interface CheckpointCalls {
  listCheckpoint(options: Record<string, never>): Promise<Array<{ Name?: string }>>;
  createCheckpoint(options: { CheckpointID: string; Exit: boolean }): Promise<unknown>;
  deleteCheckpoint(name: string): Promise<unknown>;
}

function checkpointCalls(docker: Docker, sandboxId: string): CheckpointCalls {
  return docker.getContainer(sandboxId) as unknown as CheckpointCalls;
}

/**
 * Saves a sandbox's processes and memory to disk and ends its container (which frees the memory):
 * `runsc checkpoint` or runc's CRIU, through Docker's checkpoint API. A checkpoint that fails
 * leaves the container as it was, running or frozen; if the runtime had already ended it, it is
 * started again (its files kept, its processes anew) and the error says so.
 */
export async function checkpointContainer(docker: Docker, sandboxId: string): Promise<void> {
  const container = docker.getContainer(sandboxId);
  const frozen = (await container.inspect()).State.Paused;
  // runsc checkpoints a frozen container, yet Docker then still reports it paused: thaw it first.
  if (frozen) await container.unpause();
  const address = Object.values(
    (await container.inspect()).NetworkSettings.Networks as Record<string, { IPAddress?: string }>,
  )[0]?.IPAddress;
  try {
    if (address) await connectionsClosed(address, 30_000);
    // A checkpoint left by an earlier pause would make the create refuse.
    await checkpointCalls(docker, sandboxId).deleteCheckpoint(checkpointName).catch(ignoreMissing);
    await checkpointCalls(docker, sandboxId).createCheckpoint({ CheckpointID: checkpointName, Exit: true });
    // The engine answers once runsc has saved; it notes the container's exit a moment later.
    await container.wait({ condition: "not-running" });
  } catch (error) {
    const message = String((error as Error).message);
    const state = (await container.inspect()).State;
    if (state.Running) {
      if (frozen) await container.pause();
      throw new Error(`checkpoint failed: ${message}`, { cause: error });
    }
    await container.start();
    if (frozen) await container.pause();
    throw new Error(`checkpoint failed: ${message}; the sandbox's processes started again`, {
      cause: error,
    });
  }
}

/** Whether the sandbox's container has its checkpoint (a pause to disk that kept memory). */
export async function hasCheckpoint(docker: Docker, sandboxId: string): Promise<boolean> {
  const listed = await checkpointCalls(docker, sandboxId)
    .listCheckpoint({})
    .catch(() => []);
  return listed.some((entry) => entry.Name === checkpointName);
}

/** Starts a checkpointed sandbox's container from its checkpoint, then drops the checkpoint. */
export async function restoreContainer(docker: Docker, sandboxId: string): Promise<void> {
  // Docker uploads the checkpoint to containerd's content store first, and that upload now and
  // then fails on a blob the store already holds ("content sha256:… already exists", moby
  // issue 42900): nothing was started, so the start is tried again.
  for (let attempt = 1; ; attempt++) {
    try {
      await startFromCheckpoint(docker, sandboxId);
      break;
    } catch (error) {
      if (attempt >= 3 || !/already exists/.test(String((error as Error).message))) throw error;
    }
  }
  // Spent: the next pause takes a new one. Only disk space is at stake if this fails.
  await checkpointCalls(docker, sandboxId)
    .deleteCheckpoint(checkpointName)
    .catch(() => undefined);
}

function startFromCheckpoint(docker: Docker, sandboxId: string): Promise<unknown> {
  // In the query: dockerode would send it as a body, which the engine refuses on start. (With
  // no options, docker-modem drops a path's last character, the "?" it expects: hence the "&".)
  return new Promise((resolve, reject) =>
    docker.modem.dial(
      {
        path: `/containers/${encodeURIComponent(sandboxId)}/start?checkpoint=${checkpointName}&`,
        method: "POST",
        statusCodes: { 204: true, 304: true, 404: "no such container", 500: "server error" },
      },
      (error, data) => (error ? reject(error) : resolve(data)),
    ),
  );
}

/**
 * Waits (up to `timeoutMs`) until this host has no open TCP connection to the sandbox, else
 * refuses the checkpoint (a stream still open: the sandbox stays where it was). runsc
 * drops open connections at a checkpoint (`--net-disconnect-ok`), and a Node server that held one
 * (execd) spins on it after the restore and answers nothing more; CRIU refuses to dump an
 * established connection unless told to keep it, which would need the same peer after the
 * restore. One closed before is harmless. The server's kept-alive connections to execd close
 * after 4 s idle.
 */
async function connectionsClosed(address: string, timeoutMs: number): Promise<void> {
  const wanted = hexAddress(address);
  const deadline = Date.now() + timeoutMs;
  let open: string[] = [];
  while (Date.now() < deadline) {
    const table = await readFile("/proc/net/tcp", "utf8").catch(() => "");
    open = table
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      // Held open in the sandbox: established (01), being set up (02, 03), or closed by this host
      // and not yet by the sandbox (FIN_WAIT1/2: 04, 05). In every other state the sandbox's
      // side has closed already (CLOSE_WAIT, LAST_ACK: it closed first).
      .filter(([, , remote, state = ""]) => remote?.startsWith(`${wanted}:`) && heldStates.has(state))
      .map(([, local, remote, state]) => `${local}→${remote} state ${state}`);
    if (open.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `connections to the sandbox stayed open for ${timeoutMs / 1000} s (/proc/net/tcp: ${open.join(", ")})`,
  );
}

const heldStates = new Set(["01", "02", "03", "04", "05"]);

/** An IPv4 address as /proc/net/tcp writes it: the four bytes in host (little-endian) order. */
function hexAddress(address: string): string {
  return address
    .split(".")
    .reverse()
    .map((part) => Number(part).toString(16).padStart(2, "0").toUpperCase())
    .join("");
}

function ignoreMissing(error: { statusCode?: number; message?: string }): void {
  if (error.statusCode === 404 || /not exist|no such/i.test(String(error.message))) return;
  throw error;
}
