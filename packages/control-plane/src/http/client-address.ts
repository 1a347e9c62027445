import { isIPv4, isIPv6 } from "node:net";

/**
 * The client a rate limit counts: an IPv4 address, or the /64 of an IPv6 address (the block one
 * subscriber is usually given, who could otherwise pick a fresh address for every request).
 * An IPv4 address in IPv6 form (`::ffff:192.0.2.1`) is the IPv4 address.
 */
export function clientOf(address: string): string {
  const bare = address.replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped) return mapped[1] as string;
  if (isIPv4(bare) || !isIPv6(bare)) return bare;
  const [head = "", tail] = bare.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  // An embedded IPv4 address at the end fills two groups.
  const tailLength = tailGroups.reduce((sum, group) => sum + (group.includes(".") ? 2 : 1), 0);
  const groups = [
    ...headGroups,
    ...Array<string>(tail === undefined ? 0 : 8 - headGroups.length - tailLength).fill("0"),
    ...tailGroups,
  ];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}
