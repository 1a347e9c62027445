import { readdir, readFile } from "node:fs/promises";

/**
 * A runsc container whose start fails can leave its `runsc-sandbox`/`runsc-gofer` processes
 * behind. They carry the container id on their command line; find and kill them.
 * Only meaningful when the Docker engine runs on this host.
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
