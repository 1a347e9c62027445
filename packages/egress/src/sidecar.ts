import { EGRESS_POLICY_ENV, EGRESS_PORT, EGRESS_TOKEN_ENV } from "@paddock/common/contracts";
import { denyAll, type NetworkPolicy, parsePolicy } from "@paddock/common/egress-policy";
import { createApi } from "./api.js";
import { DnsProxy } from "./dns-proxy.js";
import { Enforcer } from "./enforcer.js";
import { DNS_PROXY_PORT } from "./nft-ruleset.js";
import { PolicyStore } from "./policy-store.js";
import { findUpstream, UpstreamResolver } from "./upstream.js";

function log(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), event, ...fields })}\n`);
}

/**
 * The policy to enforce at start: the one saved by an earlier run of this container (a restart),
 * else the runtime's initial policy. A policy that cannot be read fails closed: deny all.
 */
function initialPolicy(store: PolicyStore): NetworkPolicy {
  try {
    const saved = store.load();
    if (saved) return saved;
  } catch (error) {
    log("saved_policy_unreadable", { error: (error as Error).message });
    return denyAll;
  }
  const text = process.env[EGRESS_POLICY_ENV];
  try {
    return parsePolicy(text ? JSON.parse(text) : null);
  } catch (error) {
    log("initial_policy_invalid", { error: (error as Error).message });
    return denyAll;
  }
}

/**
 * Starts the sidecar: the upstream socket, nft enforcement, DNS proxy, then the API. /healthz turns
 * 200 only when all of it is in place. Any failure before that exits non-zero; rules a previous
 * run installed stay in the kernel meanwhile, so the sandbox stays as restricted as it was.
 */
export async function startSidecar(): Promise<void> {
  const token = process.env[EGRESS_TOKEN_ENV] || undefined;
  if (!token) log("no_token", { message: `${EGRESS_TOKEN_ENV} is unset: /policy refuses every call` });
  const upstream = findUpstream();
  // Bound before the rules name its port: a port picked now cannot have been taken in advance.
  const resolver = await UpstreamResolver.open(upstream);
  const store = new PolicyStore();
  const enforcer = new Enforcer(initialPolicy(store), store, upstream, resolver.port);
  let ready = false;

  const api = createApi({ enforcer, token, ready: () => ready, log });
  await new Promise<void>((resolve) => api.listen(EGRESS_PORT, "0.0.0.0", resolve));

  await enforcer.install();
  const proxy = new DnsProxy(
    {
      allows: (name) => enforcer.allows(name),
      forward: (query, transport) => resolver.resolve(query, transport),
      learn: (name, answer) => enforcer.learn(name, answer),
      log,
    },
    "127.0.0.1",
    DNS_PROXY_PORT,
  );
  await proxy.listen();
  ready = true;
  log("enforcing", {
    upstream: `${upstream.address}:${upstream.port}`,
    mode: enforcer.current().defaultAction,
  });

  const stop = () => {
    resolver.close();
    proxy.close();
    api.close();
    // The rules stay: a stopped sidecar leaves the sandbox restricted (fail closed).
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
