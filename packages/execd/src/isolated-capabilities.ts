import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { EXECD_MOUNT } from "@paddock/common/contracts";

/** Static busybox shipped in the execd image: unshare and mount whatever the user's image holds. */
export const busybox = process.env.PADDOCK_EXECD_BUSYBOX ?? `${EXECD_MOUNT}/bin/busybox`;
/** Parent of every session's private directory (a tmpfs mounted inside the session only). */
export const sessionsRoot = "/run/paddock-isolated";

/** What this sandbox's runtime lets an isolated session do, found by trying it. */
export interface IsolationSupport {
  userNamespace: boolean;
  mountNamespace: boolean;
  pidNamespace: boolean;
  overlay: boolean;
  /** A fresh /proc showing only the session's processes. */
  privateProc: boolean;
  /** Why something above is false, in the runtime's own words. */
  reasons: string[];
}

const markers = ["namespaces", "tmpfs", "overlay", "proc"] as const;

/**
 * Builds, in a throwaway process, the same namespaces and mounts a session uses: unshare into a
 * user (root mapped to root), mount and PID namespace, a tmpfs, an overlay and a fresh /proc.
 * Each step that works prints a marker; the first failure's message is the reason.
 */
export async function probeIsolation(): Promise<IsolationSupport> {
  const none: IsolationSupport = {
    userNamespace: false,
    mountNamespace: false,
    pidNamespace: false,
    overlay: false,
    privateProc: false,
    reasons: [],
  };
  if (!existsSync(busybox)) {
    return { ...none, reasons: [`${busybox} is missing: this execd image predates isolated sessions`] };
  }
  const dir = join(sessionsRoot, `.probe-${randomUUID()}`);
  try {
    await mkdir(join(dir, "lower"), { recursive: true, mode: 0o700 });
    const script = [
      'B="$1"; D="$2"',
      "echo namespaces",
      '"$B" mount -t tmpfs -o mode=0700 tmpfs "$D/lower" && echo tmpfs || exit 0',
      '"$B" mkdir "$D/lower/l" "$D/lower/u" "$D/lower/w" "$D/lower/m"',
      '"$B" mount -t overlay overlay -o "userxattr,lowerdir=$D/lower/l,upperdir=$D/lower/u,workdir=$D/lower/w" "$D/lower/m" && echo overlay',
      '"$B" mount -t proc proc /proc && echo proc',
      "exit 0",
    ].join("\n");
    const { stdout, stderr } = await run(busybox, [
      "unshare",
      "-r",
      "-m",
      "-p",
      "-f",
      "--",
      busybox,
      "sh",
      "-c",
      script,
      "probe",
      busybox,
      dir,
    ]);
    const seen = new Set(stdout.split("\n").filter((line) => (markers as readonly string[]).includes(line)));
    const errors = stderr
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("dmesg"))
      .join(" ");
    const because = errors ? ` (${errors})` : "";
    const namespaces = seen.has("namespaces");
    const support: IsolationSupport = {
      userNamespace: namespaces,
      mountNamespace: namespaces && seen.has("tmpfs"),
      pidNamespace: namespaces,
      overlay: seen.has("overlay"),
      privateProc: seen.has("proc"),
      reasons: [],
    };
    if (!namespaces) {
      support.reasons.push(
        `this runtime does not let the sandbox create a user namespace with root mapped to root, a mount and a PID namespace${because}`,
      );
    } else if (!support.mountNamespace) {
      support.reasons.push(`this runtime refuses mounts inside the sandbox's own user namespace${because}`);
    } else if (!support.overlay) {
      support.reasons.push(`overlayfs cannot be mounted in a user namespace here${because}`);
    }
    if (support.overlay && !support.privateProc) {
      support.reasons.push(
        "a fresh /proc is refused inside the session (the sandbox's /proc has masked paths), so the " +
          "session's /proc still lists the sandbox's processes although it cannot signal them",
      );
    }
    return support;
  } catch (error) {
    return { ...none, reasons: [(error as Error).message] };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function run(file: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(timer);
      resolve({ stdout, stderr });
    });
  });
}
