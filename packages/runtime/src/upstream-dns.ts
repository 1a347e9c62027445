import { readFileSync } from "node:fs";
import { isIP } from "node:net";

/**
 * The resolver an egress sidecar forwards allowed names to, named by the runtime in the sidecar's
 * environment: the configured one, else this host's first non-loopback nameserver (on Docker, the
 * one the engine itself forwards to; in a cluster, the cluster DNS). Docker's embedded resolver
 * (127.0.0.11) cannot serve: it forwards from inside the sandbox's network namespace, where the
 * sidecar's redirect sends the query back to the sidecar. Undefined when there is none (the
 * sidecar then resolves only names Docker answers itself). Never left to the sidecar to find:
 * the resolv.conf it sees is the sandbox's, which the sandbox may write.
 */
export function egressUpstreamDns(configured: string, resolvConf = "/etc/resolv.conf"): string | undefined {
  if (configured) return configured;
  let text: string;
  try {
    text = readFileSync(resolvConf, "utf8");
  } catch {
    return undefined;
  }
  for (const line of text.split("\n")) {
    const address = /^\s*nameserver\s+(\S+)/.exec(line)?.[1];
    if (address && isIP(address) && !isLoopback(address)) return address;
  }
  return undefined;
}

function isLoopback(address: string): boolean {
  return address.startsWith("127.") || address === "::1";
}
