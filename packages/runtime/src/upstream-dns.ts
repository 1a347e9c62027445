import { readFileSync } from "node:fs";
import { isIP } from "node:net";

/**
 * The resolver an egress sidecar forwards allowed names to. Docker's embedded resolver
 * (127.0.0.11) cannot serve: it forwards from inside the sandbox's network namespace, where the
 * sidecar's redirect sends the query back to the sidecar. So the sidecar talks to the resolver
 * Docker itself would use: the configured one, else this host's first non-loopback nameserver.
 * Undefined when there is none (the sidecar then resolves only names Docker answers itself).
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
