import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { EXECD_MOUNT } from "@paddock/common/contracts";

/** Static busybox shipped in the execd image: unshare and mount whatever the user's image holds. */
export const busybox = process.env.PADDOCK_EXECD_BUSYBOX ?? `${EXECD_MOUNT}/bin/busybox`;
/**
 * util-linux's unshare, started through the image's own loader and glibc. Busybox's refuses to
 * map root when the kernel has no /proc/self/setgroups, as gVisor has none; util-linux's skips
 * that file then.
 */
export const unshare = process.env.PADDOCK_EXECD_UNSHARE
  ? [process.env.PADDOCK_EXECD_UNSHARE]
  : [
      `${EXECD_MOUNT}/lib/ld-linux-x86-64.so.2`,
      "--library-path",
      `${EXECD_MOUNT}/lib`,
      `${EXECD_MOUNT}/bin/unshare`,
    ];
/** Parent of every session's private directory (a tmpfs mounted inside the session only). */
export const sessionsRoot = "/run/paddock-isolated";

/** The steps a session needs, in the order the probe tries them. */
export const isolationFeatures = [
  "user_namespace",
  "mount_namespace",
  "pid_namespace",
  "overlay",
  "binds",
  "private_proc",
  "locked_mounts",
  "locked_read_only",
  "network_namespace",
] as const;
export type IsolationFeature = (typeof isolationFeatures)[number];

/** What this sandbox's runtime lets an isolated session do, found by trying it. */
export interface IsolationSupport {
  /** Per feature: whether it works, and if not the runtime's own error. */
  features: Record<IsolationFeature, { available: boolean; reason?: string }>;
  /**
   * Options the overlay mount needs before lowerdir: `userxattr,` under Linux (an overlay in a
   * user namespace keeps its whiteouts in user.* attributes), nothing under gVisor (which
   * refuses the option and keeps whiteouts in its own tmpfs).
   */
  overlayOptions: string;
}

/** Why a feature is out of reach here, beyond the runtime's error text. */
const explanations: Partial<Record<IsolationFeature, string>> = {
  private_proc:
    "the kernel mounts a fresh /proc in a user namespace only if the sandbox already has a fully visible one, " +
    "and the container runtime masks parts of the sandbox's /proc (kcore, keys, sys, ...); the session's /proc " +
    "therefore still lists the sandbox's processes, although the session's PID namespace keeps it from signalling them",
  locked_mounts:
    "a second user namespace, which would lock the session's mounts so that it cannot unmount its overlay or " +
    "remount read-only paths read-write, cannot be made here",
  network_namespace:
    "the sandbox may not create network namespaces (under runc its seccomp profile keeps the host kernel's " +
    "network stack out of reach), so a session always shares the sandbox's network and its egress policy",
  locked_read_only:
    "this runtime lets a nested user namespace remount an inherited read-only mount read-write (Linux locks that " +
    "flag, MNT_LOCK_READONLY; gVisor does not): read-only binds and `ro` workspaces are therefore mounted as " +
    "overlays without an upper directory, which stay read-only, but the `strict` profile's read-only root can be " +
    "remounted read-write by the session",
};

/**
 * Builds, in a throwaway process, the same namespaces and mounts a session uses: unshare into a
 * user (root mapped to root), mount and PID namespace, a tmpfs, an overlay, a read-only bind, a
 * fresh /proc and a nested user + mount namespace that locks those mounts. Each step prints
 * `ok <feature>` or `no <feature> <error>`. Arguments: busybox, a directory, then unshare.
 */
const probeScript = [
  'B="$1"; D="$2"; shift 2',
  'step() { F="$1"; shift; if E=$("$@" 2>&1); then echo "ok $F"; else echo "no $F $E" | "$B" tr "\\n" " "; echo; return 1; fi; }',
  "echo ok namespaces",
  'step mount_namespace "$B" mount -t tmpfs -o mode=0700 tmpfs "$D" || exit 0',
  '"$B" mkdir "$D/l" "$D/u" "$D/w" "$D/m" "$D/b" "$D/t" && echo probe > "$D/l/f" && "$B" mount -t tmpfs tmpfs "$D/t"',
  'if E=$("$B" mount -t overlay overlay -o "userxattr,lowerdir=$D/l,upperdir=$D/u,workdir=$D/w" "$D/m" 2>&1); then echo "ok overlay userxattr,"',
  'elif step overlay "$B" mount -t overlay overlay -o "lowerdir=$D/l,upperdir=$D/u,workdir=$D/w" "$D/m"; then :; fi',
  'if step binds "$B" mount -o rbind "$D/l" "$D/b" && step binds "$B" mount -o remount,bind,ro "$D/b"; then',
  '  if (echo x > "$D/b/f") 2>/dev/null; then echo "no binds a read-only bind stayed writable"; fi',
  "fi",
  'step network_namespace "$@" -r -n "$B" true',
  'step private_proc "$B" mount -t proc proc /proc',
  // In a nested user namespace the mounts above are locked: unmounting one must fail.
  'if step locked_mounts "$@" -r -m "$B" true; then',
  '  if "$@" -r -m "$B" umount "$D/t" 2>/dev/null; then echo "no locked_mounts a nested namespace could unmount"; fi',
  '  "$B" mount -o remount,ro "$D/t"',
  '  if "$@" -r -m "$B" mount -o remount,rw "$D/t" 2>/dev/null; then echo "no locked_read_only remounted read-write"; else echo "ok locked_read_only"; fi',
  "fi",
  "exit 0",
].join("\n");

export async function probeIsolation(): Promise<IsolationSupport> {
  const missing = (reason: string): IsolationSupport => ({
    features: Object.fromEntries(
      isolationFeatures.map((feature) => [feature, { available: false, reason }]),
    ) as IsolationSupport["features"],
    overlayOptions: "",
  });
  if (!existsSync(busybox))
    return missing(`${busybox} is missing: this execd image predates isolated sessions`);
  const dir = join(sessionsRoot, `.probe-${randomUUID()}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const [file, ...prefix] = unshare as [string, ...string[]];
    const { stdout, stderr } = await run(file, [
      ...prefix,
      "-r",
      "-m",
      "-p",
      "-f",
      "--",
      busybox,
      "sh",
      "-c",
      probeScript,
      "probe",
      busybox,
      dir,
      ...unshare,
    ]);
    return readProbe(stdout, stderr);
  } catch (error) {
    return missing((error as Error).message);
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Turns the probe's `ok`/`no` lines into per-feature support; exported for unit tests. */
export function readProbe(stdout: string, stderr: string): IsolationSupport {
  const passed = new Set<string>();
  const failed = new Map<string, string>();
  let overlayOptions = "";
  for (const line of stdout.split("\n")) {
    const [verdict, feature = "", ...rest] = line.trim().split(" ");
    if (verdict === "ok") {
      passed.add(feature);
      if (feature === "overlay") overlayOptions = rest.join(" ");
    } else if (verdict === "no" && !failed.has(feature)) {
      failed.set(
        feature,
        rest
          .join(" ")
          .replace(/\s*dmesg\(1\) may have more information.*$/, "")
          .trim(),
      );
    }
  }
  const namespaces = passed.has("namespaces");
  const namespaceError =
    "this runtime does not let the sandbox create a user namespace with root mapped to root, a mount and a PID namespace" +
    (stderr.trim() ? ` (${stderr.trim().replace(/\s+/g, " ")})` : "");
  const features = {} as IsolationSupport["features"];
  for (const feature of isolationFeatures) {
    const available =
      feature === "user_namespace" || feature === "pid_namespace"
        ? namespaces
        : passed.has(feature) && !failed.has(feature);
    if (available) {
      features[feature] = { available };
      continue;
    }
    const error = failed.get(feature);
    const why = explanations[feature];
    let reason = namespaceError;
    if (namespaces && error !== undefined)
      reason = [why, `the runtime said: ${error}`].filter(Boolean).join("; ");
    else if (namespaces) reason = "not tried: an earlier step failed";
    features[feature] = { available, reason };
  }
  return { features, overlayOptions };
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
