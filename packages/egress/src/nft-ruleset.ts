import type { CompiledRule, NetworkPolicy } from "@paddock/common/egress-policy";
import { compileRules } from "@paddock/common/egress-policy";

/** Our own table; nothing else in the network namespace (Docker's DNS rules included) is touched. */
export const TABLE = "inet paddock_egress";
/** Where the DNS proxy listens; every DNS packet leaving the sandbox is redirected here. */
export const DNS_PROXY_PORT = 15353;
/** Docker's embedded resolver on user-defined networks. */
export const DOCKER_DNS = "127.0.0.11";

export interface Upstream {
  family: 4 | 6;
  address: string;
  port: number;
}

export interface Enforcement {
  policy: NetworkPolicy;
  upstream: Upstream;
  /** The sidecar's UDP port to the upstream resolver (upstream.ts): only it may reach the resolver. */
  forwarderPort: number;
}

function networkText(rule: CompiledRule): { family: "ip" | "ip6"; text: string } | undefined {
  const { target } = rule;
  if (target.kind !== "network") return undefined;
  const full = target.prefix === (target.family === 4 ? 32 : 128);
  return {
    family: target.family === 4 ? "ip" : "ip6",
    text: full ? target.address : `${target.address}/${target.prefix}`,
  };
}

/**
 * The whole enforcement as one nft transaction. Chains are flushed and refilled in the same
 * transaction, so a new connection sees either the old rules or the new ones, never a gap. The
 * sets of addresses learned from DNS answers survive (they are emptied separately, see
 * learned-addresses.ts), so a policy change does not break names resolved a moment ago.
 */
export function renderRuleset({ policy, upstream, forwarderPort }: Enforcement): string {
  const t = TABLE;
  const upstreamFamily = upstream.family === 4 ? "ip" : "ip6";
  // Docker rewrites 127.0.0.11:53 to a random port of its resolver, so only the address is checked there.
  const upstreamPort = upstream.address === DOCKER_DNS ? "" : ` th dport ${upstream.port}`;
  const lines = [
    `add table ${t}`,
    `add set ${t} dns4 { type ipv4_addr; flags timeout; }`,
    `add set ${t} dns6 { type ipv6_addr; flags timeout; }`,
    // Before Docker's own DNS rewrite (priority -100): the first NAT chain that maps a flow wins.
    `add chain ${t} dns_redirect { type nat hook output priority -150; policy accept; }`,
    `add chain ${t} output { type filter hook output priority 0; policy accept; }`,
    `add chain ${t} forwarder`,
    `add chain ${t} refuse`,
    `flush chain ${t} dns_redirect`,
    `flush chain ${t} output`,
    `flush chain ${t} forwarder`,
    `flush chain ${t} refuse`,
    `add rule ${t} dns_redirect udp sport ${forwarderPort} return`,
    `add rule ${t} dns_redirect udp dport 53 redirect to :${DNS_PROXY_PORT}`,
    `add rule ${t} dns_redirect tcp dport 53 redirect to :${DNS_PROXY_PORT}`,
    // Refusals answer at once (RST or ICMP) rather than letting clients wait for a timeout.
    `add rule ${t} refuse meta l4proto tcp reject with tcp reset`,
    `add rule ${t} refuse reject with icmpx type admin-prohibited`,
    `add rule ${t} forwarder ${upstreamFamily} daddr ${upstream.address} meta l4proto udp${upstreamPort} accept`,
    `add rule ${t} forwarder drop`,
    `add rule ${t} output ct state established,related accept`,
    // The forwarder's port only receives answers (established above): nothing local may send to
    // it, so no answer can be forged from inside, not even from Docker's resolver address.
    `add rule ${t} output udp dport ${forwarderPort} goto refuse`,
    `add rule ${t} output udp sport ${forwarderPort} goto forwarder`,
    // Docker's resolver is reached only through the proxy, whatever port a client tries.
    `add rule ${t} output ip daddr ${DOCKER_DNS} goto refuse`,
    // Local destinations (loopback, the sandbox's own addresses, the proxy after a redirect).
    // Matched by address: \`oif\` still names the pre-redirect route in this hook.
    `add rule ${t} output fib daddr type local accept`,
  ];
  for (const rule of compileRules(policy)) {
    const network = networkText(rule);
    if (!network) continue;
    const verdict = rule.action === "allow" ? "accept" : "goto refuse";
    lines.push(`add rule ${t} output ${network.family} daddr ${network.text} ${verdict}`);
  }
  if (policy.defaultAction === "deny") {
    lines.push(
      `add rule ${t} output ip daddr @dns4 accept`,
      `add rule ${t} output ip6 daddr @dns6 accept`,
      `add rule ${t} output goto refuse`,
    );
  }
  return `${lines.join("\n")}\n`;
}
