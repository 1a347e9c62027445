import { isIPv4, isIPv6 } from "node:net";

/**
 * A rule target, parsed once at validation time:
 * - `domain`: `example.com` matches that name only;
 * - `wildcard`: `*.example.com` matches every name below it, never the apex;
 * - `network`: an IPv4/IPv6 address (a /32 or /128) or a CIDR, in nft's notation.
 */
export type Target =
  | { kind: "domain"; name: string }
  | { kind: "wildcard"; suffix: string }
  | { kind: "network"; family: 4 | 6; address: string; prefix: number };

const label = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

function isDomain(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split(".");
  // A lone label ("localhost") is a valid name; all-numeric last labels are addresses gone wrong.
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? "")) return false;
  return labels.every((part) => label.test(part));
}

/** The canonical form of a target (lower case, no trailing dot), or undefined when malformed. */
export function parseTarget(raw: string): Target | undefined {
  const text = raw.trim().toLowerCase().replace(/\.$/, "");
  if (text.includes("/")) return parseCidr(text);
  if (isIPv4(text)) return { kind: "network", family: 4, address: text, prefix: 32 };
  if (isIPv6(text)) return { kind: "network", family: 6, address: normalizeIPv6(text), prefix: 128 };
  if (text.startsWith("*.")) {
    const suffix = text.slice(2);
    return isDomain(suffix) ? { kind: "wildcard", suffix } : undefined;
  }
  return isDomain(text) ? { kind: "domain", name: text } : undefined;
}

function parseCidr(text: string): Target | undefined {
  const [address = "", prefixText = "", ...rest] = text.split("/");
  if (rest.length > 0 || !/^[0-9]{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (isIPv4(address) && prefix <= 32) {
    return { kind: "network", family: 4, address: maskIPv4(address, prefix), prefix };
  }
  if (isIPv6(address) && prefix <= 128) {
    return { kind: "network", family: 6, address: maskIPv6(address, prefix), prefix };
  }
  return undefined;
}

/** The key under which a target is stored: what PATCH replaces and DELETE removes by. */
export function targetKey(target: Target): string {
  switch (target.kind) {
    case "domain":
      return target.name;
    case "wildcard":
      return `*.${target.suffix}`;
    case "network":
      return target.prefix === (target.family === 4 ? 32 : 128)
        ? target.address
        : `${target.address}/${target.prefix}`;
  }
}

/** Whether a DNS name (lower case, no trailing dot) is matched by a name target. */
export function matchesName(target: Target, name: string): boolean {
  if (target.kind === "domain") return target.name === name;
  if (target.kind === "wildcard") return name.endsWith(`.${target.suffix}`);
  return false;
}

function maskIPv4(address: string, prefix: number): string {
  const value = address.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);
  const masked = prefix === 0 ? 0 : Number((BigInt(value) >> BigInt(32 - prefix)) << BigInt(32 - prefix));
  return [24, 16, 8, 0].map((shift) => (masked >>> shift) & 255).join(".");
}

function ipv6ToBigInt(address: string): bigint {
  let text = address;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const parts = v4[1].split(".").map(Number);
    const high = (((parts[0] ?? 0) << 8) | (parts[1] ?? 0)).toString(16);
    const low = (((parts[2] ?? 0) << 8) | (parts[3] ?? 0)).toString(16);
    text = `${text.slice(0, -v4[1].length)}${high}:${low}`;
  }
  const [head = "", tail] = text.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array(tail === undefined ? 0 : missing).fill("0"), ...tailGroups];
  return groups.reduce((sum, group) => (sum << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

function bigIntToIPv6(value: bigint): string {
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  // Compress the longest run of zero groups, as RFC 5952 asks.
  let best = { start: -1, length: 0 };
  for (let start = 0; start < 8; ) {
    let end = start;
    while (end < 8 && groups[end] === "0") end++;
    if (end - start > best.length && end - start > 1) best = { start, length: end - start };
    start = end === start ? start + 1 : end;
  }
  if (best.start < 0) return groups.join(":");
  const head = groups.slice(0, best.start).join(":");
  const tail = groups.slice(best.start + best.length).join(":");
  return `${head}::${tail}`;
}

function normalizeIPv6(address: string): string {
  return bigIntToIPv6(ipv6ToBigInt(address));
}

function maskIPv6(address: string, prefix: number): string {
  const bits = 128n - BigInt(prefix);
  return bigIntToIPv6((ipv6ToBigInt(address) >> bits) << bits);
}
