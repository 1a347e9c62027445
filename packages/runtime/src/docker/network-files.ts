import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Mount } from "./volumes.js";

const run = promisify(execFile);

/** Room for every line a sandbox may add to its hosts file, and no more of the host's memory. */
const filesystemSize = "1m";

/**
 * Docker's embedded resolver, which answers inside every container on a user-defined network
 * through the namespace's own rules; gVisor's own network stack never sees those rules (its
 * 127.0.0.11 is its own loopback), so its sandboxes are given the upstream resolver instead.
 */
export const embeddedResolver = "127.0.0.11";

const hosts = [
  "127.0.0.1\tlocalhost",
  "::1\tlocalhost ip6-localhost ip6-loopback",
  "fe00::0\tip6-localnet",
  "ff00::0\tip6-mcastprefix",
  "ff02::1\tip6-allnodes",
  "ff02::2\tip6-allrouters",
  "",
].join("\n");

/**
 * A sandbox's /etc/hosts, /etc/hostname and /etc/resolv.conf, on a 1 MiB tmpfs of its own on the
 * host. The engine's own copies sit on the host's disk beside its state, outside the sandbox's
 * disk quota (a sandbox appending to /etc/hosts filled the host's disk), and the engine gives the
 * egress sidecar, which joins the sandbox's network, the very files the sandbox writes. Here the
 * sandbox's copies are bounded, and the sidecar gets read-only copies of its own (decision 0002).
 */
export class NetworkFiles {
  /**
   * Under /run, not the data directory: the mounts outlive the server as the sandboxes do, and a
   * data directory removed with a sandbox still running would otherwise stop at its mount.
   */
  constructor(private readonly dir = "/run/paddock/network-files") {}

  /** Whether this process can mount the files where the engine finds them (root, the engine on this host). */
  static possible(socketPath: string): boolean {
    return process.getuid?.() === 0 && socketPath.startsWith("/");
  }

  /** Makes the files for a sandbox about to be created; returns the mounts that put them in place. */
  async create(
    sandboxId: string,
    hostname: string,
    nameserver = embeddedResolver,
  ): Promise<{ sandbox: Mount[]; sidecar: Mount[] }> {
    const resolvConf = `nameserver ${nameserver}\noptions ndots:0\n`;
    const directory = this.directoryOf(sandboxId);
    await mkdir(directory, { recursive: true, mode: 0o700 });
    await run("mount", [
      "-t",
      "tmpfs",
      "-o",
      `size=${filesystemSize},mode=0755,nosuid,nodev,noexec`,
      "tmpfs",
      directory,
    ]);
    const mounts = async (reader: Reader, readOnly: boolean) => {
      await mkdir(join(directory, reader));
      return Promise.all(
        Object.entries({ hosts, hostname: `${hostname}\n`, "resolv.conf": resolvConf }).map(
          async ([file, content]): Promise<Mount> => {
            await writeFile(join(directory, reader, file), content);
            return {
              Type: "bind",
              Source: join(directory, reader, file),
              Target: `/etc/${file}`,
              ReadOnly: readOnly,
            };
          },
        ),
      );
    };
    return { sandbox: await mounts("sandbox", false), sidecar: await mounts("sidecar", true) };
  }

  /**
   * Names the sandbox's own address, once it has one, as the engine's hosts file would; a sandbox
   * started again (a resume from disk) may have a new one, which replaces the old.
   */
  async setAddress(sandboxId: string, address: string, hostname: string): Promise<void> {
    for (const reader of readers) {
      const file = join(this.directoryOf(sandboxId), reader, "hosts");
      const lines = (await readFile(file, "utf8")).split("\n").filter((line) => line !== "");
      const others = lines.filter((line) => !line.endsWith(`\t${hostname}`));
      await writeFile(file, `${[...others, `${address}\t${hostname}`].join("\n")}\n`);
    }
  }

  async release(sandboxId: string): Promise<void> {
    const directory = this.directoryOf(sandboxId);
    await run("umount", [directory]).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  }

  /**
   * Releases the files of sandboxes whose container is gone without this runtime removing it (a
   * container removed by hand, a server killed mid-cleanup). Only those older than `graceMs`:
   * another server on the engine may be creating a sandbox whose container does not exist yet.
   */
  async releaseOrphans(
    containerExists: (sandboxId: string) => Promise<boolean>,
    graceMs: number,
  ): Promise<void> {
    const names = await readdir(this.dir).catch(() => []);
    for (const sandboxId of names) {
      const made = await stat(this.directoryOf(sandboxId)).catch(() => undefined);
      if (!made || Date.now() - made.birthtimeMs < graceMs) continue;
      if (!(await containerExists(sandboxId))) await this.release(sandboxId);
    }
  }

  private directoryOf(sandboxId: string): string {
    return join(this.dir, sandboxId);
  }
}

const readers = ["sandbox", "sidecar"] as const;
type Reader = (typeof readers)[number];
