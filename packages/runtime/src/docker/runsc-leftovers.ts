import { readdir, readFile } from "node:fs/promises";

/**
 * A runsc container whose start fails can leave its `runsc-sandbox`/`runsc-gofer` processes
 * behind, and one whose Sentry stopped answering keeps the engine's `runsc kill <id> 9` waiting
 * (decision 0200). They all carry the container's full id on their command line (the shim's does
 * too, but not "runsc"); find and kill them. Only meaningful when the Docker engine runs on this
 * host; a runc container has no such processes.
 */
export async function killRunscLeftovers(containerId: string): Promise<number> {
  let killed = 0;
  for (const entry of await readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes("runsc") && cmdline.includes(containerId)) {
      try {
        process.kill(Number(entry), "SIGKILL");
        killed++;
      } catch {
        // Already gone.
      }
    }
  }
  return killed;
}
