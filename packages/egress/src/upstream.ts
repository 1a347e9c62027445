import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { isIPv4, isIPv6 } from "node:net";
import { EGRESS_UPSTREAM_DNS_ENV } from "@paddock/common/contracts";
import { DOCKER_DNS, type Upstream } from "./nft-ruleset.js";

export type Transport = "udp" | "tcp";

/**
 * The resolver the sandbox had before enforcement: PADDOCK_EGRESS_UPSTREAM_DNS (ip, ip:port or
 * [ipv6]:port) when set, else the first nameserver of /etc/resolv.conf (which a container that
 * joins another's network shares), else Docker's embedded resolver.
 */
export function findUpstream(
  override = process.env[EGRESS_UPSTREAM_DNS_ENV],
  resolvConf = "/etc/resolv.conf",
): Upstream {
  if (override) {
    const parsed = parseAddress(override.trim());
    if (!parsed) throw new Error(`${EGRESS_UPSTREAM_DNS_ENV}=${override} is not ip[:port]`);
    return parsed;
  }
  try {
    for (const line of readFileSync(resolvConf, "utf8").split("\n")) {
      const match = /^\s*nameserver\s+(\S+)/.exec(line);
      const parsed = match?.[1] ? parseAddress(match[1]) : undefined;
      if (parsed) return parsed;
    }
  } catch {
    // No resolv.conf: fall through to Docker's resolver.
  }
  return { family: 4, address: DOCKER_DNS, port: 53 };
}

function parseAddress(text: string): Upstream | undefined {
  if (isIPv4(text)) return { family: 4, address: text, port: 53 };
  if (isIPv6(text)) return { family: 6, address: text, port: 53 };
  const match = /^(?:\[([^\]]+)\]|([0-9.]+)):([0-9]{1,5})$/.exec(text);
  const address = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!address || !(port > 0 && port < 65536)) return undefined;
  if (isIPv4(address)) return { family: 4, address, port };
  if (isIPv6(address)) return { family: 6, address, port };
  return undefined;
}

interface Request {
  id: number;
  transport: Transport;
  query: Buffer;
}
type Reply = { id: number; answer: Buffer } | { id: number; error: string };

/**
 * The parent's handle on the forwarder: a child process running under its own uid, the only
 * sockets the ruleset lets reach the upstream resolver. It is restarted if it dies.
 */
export class UpstreamClient {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private closed = false;
  private readonly pending = new Map<number, { resolve(answer: Buffer): void; reject(error: Error): void }>();

  constructor(
    private readonly entry: string,
    private readonly upstream: Upstream,
    private readonly uid: number,
  ) {}

  start(): void {
    const child = fork(this.entry, ["forwarder", JSON.stringify(this.upstream)], {
      uid: this.uid,
      gid: this.uid,
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    child.on("message", (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if ("answer" in reply) waiter.resolve(Buffer.from(reply.answer));
      else waiter.reject(new Error(reply.error));
    });
    child.on("exit", () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error("forwarder exited"));
      this.pending.clear();
      if (!this.closed) setTimeout(() => this.start(), 200).unref();
    });
    this.child = child;
  }

  resolve(query: Buffer, transport: Transport): Promise<Buffer> {
    const child = this.child;
    if (!child?.connected) return Promise.reject(new Error("forwarder not running"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.send({ id, transport, query } satisfies Request);
    });
  }

  close(): void {
    this.closed = true;
    this.child?.kill();
  }
}

export type { Reply as ForwarderReply, Request as ForwarderRequest };
