import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type Docker from "dockerode";
import { succeeds } from "./existence-check.js";

const run = promisify(execFile);

export interface SandboxNetworkOptions {
  name: string;
  subnet: string;
  blockHostAccess: boolean;
}

/** Linux interface name of the sandbox bridge, derived from the network name (≤ 15 chars). */
export function bridgeName(network: string): string {
  return `pdk-${network.replace(/[^a-z0-9]/gi, "").slice(-11)}`;
}

/**
 * The dedicated bridge every sandbox joins: inter-container traffic off, so sandboxes cannot
 * reach each other. Created once; an existing network of that name is reused.
 */
export async function ensureSandboxNetwork(docker: Docker, options: SandboxNetworkOptions): Promise<void> {
  const existing = await docker.listNetworks({ filters: { name: [options.name] } });
  if (!existing.some((network) => network.Name === options.name)) {
    try {
      await docker.createNetwork({
        Name: options.name,
        Driver: "bridge",
        CheckDuplicate: true,
        EnableIPv6: false,
        Labels: { "paddock.managed": "true" },
        IPAM: { Driver: "default", Config: [{ Subnet: options.subnet }] },
        Options: {
          "com.docker.network.bridge.name": bridgeName(options.name),
          "com.docker.network.bridge.enable_icc": "false",
          "com.docker.network.bridge.enable_ip_masquerade": "true",
        },
      });
    } catch (error) {
      // Another server process may have created it between our list and create.
      if (!String((error as Error).message).includes("already exists")) throw error;
    }
  }
  if (options.blockHostAccess) await installHostFirewall(bridgeName(options.name));
}

/**
 * Packets from sandboxes to this host's own addresses go through INPUT; we let through only
 * replies to connections the host opened (the server talking to execd, the proxy). Forwarded
 * packets to link-local space (169.254.0.0/16, the cloud metadata service) are dropped in
 * DOCKER-USER, which Docker evaluates before its own rules.
 */
async function installHostFirewall(bridge: string): Promise<void> {
  const chain = "PADDOCK-INPUT";
  // Never flush: other servers on this host may be starting at the same moment, and an empty
  // chain would let sandboxes through. Add what is missing, in order.
  await iptables(["-N", chain]).catch(() => undefined);
  const established = ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"];
  if (!(await succeeds(iptables(["-C", chain, ...established]))))
    await iptables(["-I", chain, "1", ...established]);
  if (!(await succeeds(iptables(["-C", chain, "-j", "DROP"])))) await iptables(["-A", chain, "-j", "DROP"]);
  await ensureRule("INPUT", ["-i", bridge, "-j", chain]);
  await iptables(["-N", "DOCKER-USER"]).catch(() => undefined);
  await ensureRule("DOCKER-USER", ["-i", bridge, "-d", "169.254.0.0/16", "-j", "DROP"]);
}

async function ensureRule(chain: string, rule: string[]): Promise<void> {
  if (!(await succeeds(iptables(["-C", chain, ...rule])))) await iptables(["-I", chain, "1", ...rule]);
}

async function iptables(args: string[]): Promise<void> {
  await run("iptables", ["-w", "5", ...args]);
}
