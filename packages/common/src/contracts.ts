/**
 * What the runtime and the in-sandbox daemons agree on. Both sides import these constants,
 * so a change here changes both at once.
 */

/** execd listens here inside every sandbox. */
export const EXECD_PORT = 44772;
/** The egress sidecar's policy API listens here, in the sandbox's network namespace. */
export const EGRESS_PORT = 18080;

/** Header carrying the per-sandbox execd token. */
export const EXECD_TOKEN_HEADER = "X-EXECD-ACCESS-TOKEN";
/**
 * Paddock extension header on execd's streaming routes (`/command`, `/session/{id}/run`). By
 * default output goes out as OpenSandbox's execd sends it, one `stdout`/`stderr` event per line
 * without its newline; with this header set to `chunks`, as the control plane sends it, output
 * goes out in the chunks the command wrote, so joined events are exactly its bytes.
 */
export const EXECD_OUTPUT_FRAMING_HEADER = "X-Paddock-Output-Framing";
/** Header carrying the per-sandbox egress sidecar token. */
export const EGRESS_TOKEN_HEADER = "X-EGRESS-ACCESS-TOKEN";

/** execd extension endpoint (POST, JSON object of name → value) that sets environment variables for
 *  every process execd starts from then on; a warm pool applies a caller's env at claim time. */
export const EXECD_ENV_PATH = "/paddock/env";
/**
 * execd extension: `/code` with this context id (and a language) runs in the sandbox's default
 * context of that language, made on first use and kept, so state carries from run to run.
 * `/code` without a context id stays stateless, as the wire spec shows.
 */
export const EXECD_DEFAULT_CODE_CONTEXT = "default";

/** Where the execd image's files are mounted (read-only, shared by every sandbox). */
export const EXECD_MOUNT = "/opt/paddock";
/** Environment variable through which the runtime hands execd its token. execd removes it from
 *  the environment of every process it starts. */
export const EXECD_TOKEN_ENV = "PADDOCK_EXECD_TOKEN";
/** Set to "1" when an egress sidecar guards the sandbox: execd holds the user's entrypoint until
 *  the sidecar reports that enforcement is in place (GET http://127.0.0.1:18080/healthz → 200). */
export const EXECD_WAIT_EGRESS_ENV = "PADDOCK_WAIT_EGRESS";
/** The CPUs the sandbox may use (its resourceLimits.cpu, as a number), for execd's metrics:
 *  gVisor shows its guests neither the CPU quota nor fewer than two CPUs. */
export const EXECD_CPU_LIMIT_ENV = "PADDOCK_CPU_LIMIT";
/** Set by a template's image (E2B's base: `user`): the account E2B's in-sandbox calls act as, and
 *  start in the home of, when they name none. Without it they act as execd's own user (root). */
export const EXECD_ENVD_USER_ENV = "PADDOCK_ENVD_USER";
/** Set by the image of a template an account built (its WORKDIR, decision 0198): where commands
 *  start when they name no directory, as in Docker and on E2B. Without it, the user's home. */
export const EXECD_WORKDIR_ENV = "PADDOCK_WORKDIR";
/**
 * execd's own Node must not take the sandbox's Node settings: a user's `NODE_OPTIONS=--require
 * ./setup.js` would stop execd from starting. Every `NODE_*` variable reaches execd emptied, its
 * value under this prefix, and execd gives the values back to the processes it starts.
 */
export const EXECD_STASHED_ENV_PREFIX = "PADDOCK_STASHED_";

/**
 * `env` (what the process would get) with every `NODE_*` variable emptied and its value stashed.
 * `inherited` is what it would get anyway (an image's own env): its variables are stashed too,
 * after giving back values an earlier stash left in it (a snapshot's image keeps its sandbox's env).
 */
export function stashNodeVariables(
  env: Record<string, string>,
  inherited: Record<string, string> = {},
): Record<string, string> {
  const stashed = { ...env };
  const wanted = { ...restoreStashedVariables(inherited), ...restoreStashedVariables(env) };
  for (const [name, value] of Object.entries(wanted)) {
    if (!name.startsWith("NODE_")) continue;
    stashed[name] = "";
    stashed[`${EXECD_STASHED_ENV_PREFIX}${name}`] = value;
  }
  return stashed;
}

/** The inverse of stashNodeVariables: stashed values back under their own names. */
export function restoreStashedVariables(env: Record<string, string | undefined>): Record<string, string> {
  const restored: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !name.startsWith(EXECD_STASHED_ENV_PREFIX)) restored[name] = value;
  }
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && name.startsWith(EXECD_STASHED_ENV_PREFIX))
      restored[name.slice(EXECD_STASHED_ENV_PREFIX.length)] = value;
  }
  return restored;
}

/** Environment variable through which the runtime hands the egress sidecar its token. */
export const EGRESS_TOKEN_ENV = "PADDOCK_EGRESS_TOKEN";
/** Environment variable carrying the sidecar's initial policy as JSON. */
export const EGRESS_POLICY_ENV = "PADDOCK_EGRESS_POLICY";
/** Environment variable naming the resolver the egress sidecar forwards allowed names to. */
export const EGRESS_UPSTREAM_DNS_ENV = "PADDOCK_EGRESS_UPSTREAM_DNS";

/**
 * The container entrypoint that starts execd first (through tini, which reaps zombies) and the
 * user's entrypoint as execd's child. Node runs through its own dynamic loader so the user's
 * image needs neither Node nor a matching libc. Without a user entrypoint (an isolated session's
 * agent, started as its session's init with no tini flags), execd alone.
 */
export function execdEntrypoint(
  userEntrypoint: readonly string[] | undefined,
  tiniFlags: readonly string[] = ["-s", "-g"],
): string[] {
  return [
    `${EXECD_MOUNT}/bin/tini`,
    ...tiniFlags,
    "--",
    ...execdNode(),
    `${EXECD_MOUNT}/execd.js`,
    ...(userEntrypoint ? ["--", ...userEntrypoint] : []),
  ];
}

/**
 * execd's own Node from the mount, through the mount's loader and libraries: the sandbox's image
 * may have no Node, or another libc.
 */
export function execdNode(): string[] {
  return [
    `${EXECD_MOUNT}/lib/ld-linux-x86-64.so.2`,
    "--library-path",
    `${EXECD_MOUNT}/lib`,
    `${EXECD_MOUNT}/bin/node`,
  ];
}

/**
 * The E2B surface: the ports E2B's SDKs name in `E2b-Sandbox-Port`, the execd paths the gateway
 * maps them to, and the envd version reported to the SDK (it turns features on by version).
 */
export const E2B_ENVD_PORT = 49983;
export const E2B_CODE_INTERPRETER_PORT = 49999;
export const EXECD_ENVD_PREFIX = "/e2b/envd";
export const EXECD_CODE_INTERPRETER_PREFIX = "/e2b/code-interpreter";
export const E2B_ENVD_VERSION = "0.6.4";

/** The sandbox states, in the order of their lifecycle (Failed: the error state), as the API
 *  names them; the moves between them are the runtime's state machine. */
export const sandboxStates = [
  "Pending",
  "Running",
  "Pausing",
  "Paused",
  "Resuming",
  "Stopping",
  "Terminated",
  "Failed",
] as const;
