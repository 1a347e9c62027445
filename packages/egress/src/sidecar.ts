import { randomInt } from "node:crypto";
import { EGRESS_POLICY_ENV, EGRESS_PORT, EGRESS_TOKEN_ENV } from "@paddock/common/contracts";
import { createApi } from "./api.js";
import { DnsProxy } from "./dns-proxy.js";
import { Enforcer } from "./enforcer.js";
import { DNS_PROXY_PORT } from "./nft-ruleset.js";
import { denyAll, type NetworkPolicy, parsePolicy } from "./policy.js";
import { PolicyStore } from "./policy-store.js";
import { findUpstream, UpstreamClient } from "./upstream.js";

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
 * Starts the sidecar: forwarder child, nft enforcement, DNS proxy, then the API. /healthz turns
 * 200 only when all of it is in place. Any failure before that exits non-zero; rules a previous
 * run installed stay in the kernel meanwhile, so the sandbox stays as restricted as it was.
 */
export async function startSidecar(entry: string): Promise<void> {
  const token = process.env[EGRESS_TOKEN_ENV] || undefined;
  if (!token) log("no_token", { message: `${EGRESS_TOKEN_ENV} is unset: /policy refuses every call` });
  // A uid no account uses: the ruleset lets only this uid's sockets reach the upstream resolver.
  const forwarderUid = randomInt(200_000, 2_000_000_000);
  const upstream = findUpstream();
  const store = new PolicyStore();
  const enforcer = new Enforcer(initialPolicy(store), store, upstream, forwarderUid);
  const client = new UpstreamClient(entry, upstream, forwarderUid);
  client.start();
  let ready = false;

  const api = createApi({ enforcer, token, ready: () => ready, log });
  await new Promise<void>((resolve) => api.listen(EGRESS_PORT, "0.0.0.0", resolve));

  await enforcer.install();
  const proxy = new DnsProxy(
    {
      allows: (name) => enforcer.allows(name),
      forward: (query, transport) => client.resolve(query, transport),
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
    client.close();
    proxy.close();
    api.close();
    // The rules stay: a stopped sidecar leaves the sandbox restricted (fail closed).
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
