import { readFile } from "node:fs/promises";

/**
 * Where setup puts Docker's own default seccomp profile (extracted from Debian's
 * golang-github-docker-docker-dev, the same version as the engine): dockerd keeps it compiled in
 * and cannot hand it out, and a custom profile replaces it whole.
 */
export const dockerDefaultSeccompPath =
  process.env.PADDOCK_DOCKER_SECCOMP_PROFILE ?? "/usr/local/share/paddock/docker-default-seccomp.json";

const CLONE_NEWNS = 0x00020000;
const CLONE_NEWUSER = 0x10000000;
const CLONE_NEWPID = 0x20000000;
/** unshare(2) flags outside user, mount and PID namespaces stay refused (no network namespaces). */
const refusedUnshareFlags = ~(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID) >>> 0;

interface SeccompProfile {
  syscalls: Array<{ names?: string[] } & Record<string, unknown>>;
}

const ioUring = new Set(["io_uring_setup", "io_uring_enter", "io_uring_register"]);

/**
 * What a runc sandbox needs beyond the usual hardening so that execd's isolated sessions can
 * build a user + mount + PID namespace with an overlay of the workspace (decision 0090): Docker's
 * default profile without io_uring, plus unshare(2) limited to those three namespace kinds and mount/umount2
 * (which the kernel still grants only inside a namespace the sandbox owns), and CAP_SETFCAP,
 * which the kernel requires to map root into a new user namespace. Undefined when Docker's
 * profile is not on this machine: sandboxes then keep the engine's built-in profile and execd
 * reports isolated sessions as unavailable.
 */
export async function runcIsolationHardening(
  path = dockerDefaultSeccompPath,
): Promise<{ securityOpt: string; capAdd: string[] } | undefined> {
  let profile: SeccompProfile;
  try {
    profile = JSON.parse(await readFile(path, "utf8")) as SeccompProfile;
  } catch {
    return undefined;
  }
  if (!Array.isArray(profile.syscalls)) return undefined;
  // No io_uring: it has been the kernel's most exploited interface of late (Docker's own profile
  // refuses it from Engine 25, gVisor does not offer it), and CRIU cannot checkpoint a process
  // holding a ring, Node's included (decision 0196). Refused, libuv falls back to epoll.
  for (const rule of profile.syscalls) {
    if (Array.isArray(rule.names)) rule.names = rule.names.filter((name) => !ioUring.has(name));
  }
  profile.syscalls.push(
    {
      names: ["unshare"],
      action: "SCMP_ACT_ALLOW",
      args: [{ index: 0, value: refusedUnshareFlags, valueTwo: 0, op: "SCMP_CMP_MASKED_EQ" }],
      comment: "paddock: isolated sessions (user, mount and PID namespaces only)",
    },
    {
      names: ["mount", "umount2"],
      action: "SCMP_ACT_ALLOW",
      args: [],
      comment: "paddock: isolated sessions mount inside their own user namespace",
    },
  );
  return { securityOpt: `seccomp=${JSON.stringify(profile)}`, capAdd: ["SETFCAP"] };
}
