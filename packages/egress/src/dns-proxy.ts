import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server, type Socket } from "node:net";
import { forgeAnswer, parseQuestion, RCODE_NXDOMAIN, RCODE_SERVFAIL } from "./dns-wire.js";
import type { Transport } from "./upstream.js";

export interface DnsDecisions {
  /** Whether the policy lets this name resolve. */
  allows(name: string): boolean;
  /** Asks the upstream resolver. */
  forward(query: Buffer, transport: Transport): Promise<Buffer>;
  /** Called with an allowed name's answer before it is returned (puts addresses into the kernel). */
  learn(name: string, answer: Buffer): Promise<void>;
  log(event: string, fields: Record<string, unknown>): void;
}

const TCP_IDLE_MS = 10_000;

/** Answers one query: NXDOMAIN for denied names, the upstream's answer for allowed ones. */
export async function answer(
  decisions: DnsDecisions,
  query: Buffer,
  transport: Transport,
): Promise<Buffer | undefined> {
  let question: ReturnType<typeof parseQuestion>;
  try {
    question = parseQuestion(query);
  } catch {
    return undefined; // Not a query we understand: no answer, as a resolver would drop garbage.
  }
  if (!decisions.allows(question.name)) {
    decisions.log("dns_denied", { name: question.name, type: question.type });
    return forgeAnswer(query, question, RCODE_NXDOMAIN);
  }
  try {
    const reply = await decisions.forward(query, transport);
    await decisions.learn(question.name, reply);
    return reply;
  } catch (error) {
    decisions.log("dns_failed", { name: question.name, error: (error as Error).message });
    return forgeAnswer(query, question, RCODE_SERVFAIL);
  }
}

/** The proxy's UDP and TCP listeners on one address. */
export class DnsProxy {
  private readonly udp: UdpSocket;
  private readonly tcp: Server;

  constructor(
    private readonly decisions: DnsDecisions,
    private readonly host: string,
    private readonly port: number,
  ) {
    this.udp = createSocket({ type: host.includes(":") ? "udp6" : "udp4" });
    this.udp.on("message", (query, remote) => {
      void answer(this.decisions, query, "udp").then((reply) => {
        if (reply) this.udp.send(reply, remote.port, remote.address);
      });
    });
    this.udp.on("error", (error) => this.decisions.log("dns_udp_error", { error: error.message }));
    this.tcp = createServer((socket) => this.serveTcp(socket));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.udp.once("error", reject);
      this.udp.bind(this.port, this.host, () => {
        this.udp.off("error", reject);
        resolve();
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.tcp.once("error", reject);
      this.tcp.listen(this.port, this.host, () => resolve());
    });
  }

  close(): void {
    this.udp.close();
    this.tcp.close();
  }

  /** RFC 7766: length-prefixed messages, several per connection, answered as they complete. */
  private serveTcp(socket: Socket): void {
    let buffered = Buffer.alloc(0);
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const query = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + query.length);
        void answer(this.decisions, Buffer.from(query), "tcp").then((reply) => {
          if (!reply || socket.destroyed) return;
          const length = Buffer.alloc(2);
          length.writeUInt16BE(reply.length);
          socket.write(Buffer.concat([length, reply]));
        });
      }
    });
  }
}
