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
/** Header carrying the per-sandbox egress sidecar token. */
export const EGRESS_TOKEN_HEADER = "X-EGRESS-ACCESS-TOKEN";

/** execd extension endpoint (POST, JSON object of name → value) that sets environment variables for
 *  every process execd starts from then on; a warm pool applies a caller's env at claim time. */
export const EXECD_ENV_PATH = "/paddock/env";

/** Where the execd image's files are mounted (read-only, shared by every sandbox). */
export const EXECD_MOUNT = "/opt/paddock";
/** Environment variable through which the runtime hands execd its token. execd removes it from
 *  the environment of every process it starts. */
export const EXECD_TOKEN_ENV = "PADDOCK_EXECD_TOKEN";
/** Set to "1" when an egress sidecar guards the sandbox: execd holds the user's entrypoint until
 *  the sidecar reports that enforcement is in place (GET http://127.0.0.1:18080/healthz → 200). */
export const EXECD_WAIT_EGRESS_ENV = "PADDOCK_WAIT_EGRESS";
/** Environment variable through which the runtime hands the egress sidecar its token. */
export const EGRESS_TOKEN_ENV = "PADDOCK_EGRESS_TOKEN";
/** Environment variable carrying the sidecar's initial policy as JSON. */
export const EGRESS_POLICY_ENV = "PADDOCK_EGRESS_POLICY";
/** Environment variable naming the resolver the egress sidecar forwards allowed names to. */
export const EGRESS_UPSTREAM_DNS_ENV = "PADDOCK_EGRESS_UPSTREAM_DNS";

/**
 * The container entrypoint that starts execd first (through tini, which reaps zombies) and the
 * user's entrypoint as execd's child. Node runs through its own dynamic loader so the user's
 * image needs neither Node nor a matching libc.
 */
export function execdEntrypoint(userEntrypoint: readonly string[]): string[] {
  return [
    `${EXECD_MOUNT}/bin/tini`,
    "-s",
    "-g",
    "--",
    `${EXECD_MOUNT}/lib/ld-linux-x86-64.so.2`,
    "--library-path",
    `${EXECD_MOUNT}/lib`,
    `${EXECD_MOUNT}/bin/node`,
    `${EXECD_MOUNT}/execd.js`,
    "--",
    ...userEntrypoint,
  ];
}
