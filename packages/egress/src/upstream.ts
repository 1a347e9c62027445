import { randomInt } from "node:crypto";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { isIPv4, isIPv6 } from "node:net";
import { EGRESS_UPSTREAM_DNS_ENV } from "@paddock/common/contracts";
import { withUdpPayloadSize } from "./dns-wire.js";
import { DOCKER_DNS, type Upstream } from "./nft-ruleset.js";

export type Transport = "udp" | "tcp";

/**
 * The resolver allowed names are forwarded to: PADDOCK_EGRESS_UPSTREAM_DNS (ip, ip:port or
 * [ipv6]:port), which the runtime sets, else Docker's embedded resolver. Never /etc/resolv.conf:
 * a sidecar shares that file with the sandbox whose network it joins, and a sandbox that could
 * name the resolver would choose what its allowed names resolve to.
 */
export function findUpstream(override = process.env[EGRESS_UPSTREAM_DNS_ENV]): Upstream {
  if (override) {
    const parsed = parseAddress(override.trim());
    if (!parsed) throw new Error(`${EGRESS_UPSTREAM_DNS_ENV}=${override} is not ip[:port]`);
    return parsed;
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

/** Queries waiting for the upstream, keyed by the id they went out under. */
interface Pending {
  query: Buffer;
  clientId: number;
  triesLeft: number;
  timer?: NodeJS.Timeout;
  resolve(answer: Buffer): void;
  reject(error: Error): void;
}

const TRY_TIMEOUT_MS = 2000;
const MAX_IN_FLIGHT = 4096;
/** A TCP client can take any size: asked over UDP, the upstream may send up to this much. */
const TCP_CLIENT_UDP_PAYLOAD = 65_000;

/**
 * The sidecar's one socket to the upstream resolver. The ruleset lets only packets from this
 * socket's port reach the upstream, and nothing in the sandbox can bind that port while the
 * socket holds it (it is bound without SO_REUSEADDR) — whatever uid or user namespace it takes.
 * A uid, by contrast, is taken by anything holding CAP_SETUID. Queries go out under random ids
 * of our own (an answer cannot be guessed) and come back under the client's.
 */
export class UpstreamResolver {
  private readonly pending = new Map<number, Pending>();

  private constructor(
    private readonly socket: UdpSocket,
    /** The source port of every query to the upstream. */
    readonly port: number,
  ) {
    socket.on("message", (answer) => this.receive(answer));
    // A refused send (ICMP port unreachable) surfaces here; the query's retry or timeout answers it.
    socket.on("error", () => undefined);
  }

  static async open(upstream: Upstream): Promise<UpstreamResolver> {
    const socket = createSocket({ type: upstream.family === 4 ? "udp4" : "udp6", reuseAddr: false });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.connect(upstream.port, upstream.address, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    return new UpstreamResolver(socket, socket.address().port);
  }

  resolve(query: Buffer, transport: Transport): Promise<Buffer> {
    if (this.pending.size >= MAX_IN_FLIGHT) return Promise.reject(new Error("too many queries in flight"));
    let id = randomInt(0x10000);
    while (this.pending.has(id)) id = randomInt(0x10000);
    const outgoing =
      transport === "tcp" ? withUdpPayloadSize(query, TCP_CLIENT_UDP_PAYLOAD) : Buffer.from(query);
    outgoing.writeUInt16BE(id, 0);
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        query: outgoing,
        clientId: query.readUInt16BE(0),
        triesLeft: 2,
        resolve,
        reject,
      };
      this.pending.set(id, entry);
      this.send(id, entry);
    });
  }

  close(): void {
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(new Error("resolver closed"));
    }
    this.pending.clear();
    this.socket.close();
  }

  private send(id: number, entry: Pending): void {
    entry.triesLeft--;
    this.socket.send(entry.query);
    entry.timer = setTimeout(() => {
      if (entry.triesLeft > 0) return this.send(id, entry);
      this.pending.delete(id);
      entry.reject(new Error("upstream timed out"));
    }, TRY_TIMEOUT_MS);
  }

  private receive(answer: Buffer): void {
    if (answer.length < 12 || !(answer[2]! & 0x80)) return;
    const id = answer.readUInt16BE(0);
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    answer.writeUInt16BE(entry.clientId, 0);
    entry.resolve(answer);
  }
}
