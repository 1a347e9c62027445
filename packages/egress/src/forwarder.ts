import { createSocket } from "node:dgram";
import { connect } from "node:net";
import type { Upstream } from "./nft-ruleset.js";
import type { ForwarderReply, ForwarderRequest } from "./upstream.js";

const UDP_TIMEOUT_MS = 2000;
const TCP_TIMEOUT_MS = 5000;

/** One UDP exchange on a fresh socket (a fresh random source port per query). */
function overUdp(upstream: Upstream, query: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(upstream.family === 4 ? "udp4" : "udp6");
    const id = query.readUInt16BE(0);
    const timer = setTimeout(() => finish(new Error("upstream timed out")), UDP_TIMEOUT_MS);
    const finish = (error: Error | undefined, answer?: Buffer) => {
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve(answer!);
    };
    socket.on("error", (error) => finish(error));
    socket.on("message", (answer) => {
      if (answer.length >= 12 && answer.readUInt16BE(0) === id) finish(undefined, answer);
    });
    socket.connect(upstream.port, upstream.address, () => socket.send(query));
  });
}

function overTcp(upstream: Upstream, query: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: upstream.address, port: upstream.port });
    let received = Buffer.alloc(0);
    socket.setTimeout(TCP_TIMEOUT_MS, () => socket.destroy(new Error("upstream timed out")));
    socket.on("error", reject);
    socket.on("connect", () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(query.length);
      socket.end(Buffer.concat([length, query]));
    });
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        resolve(received.subarray(2, 2 + received.readUInt16BE(0)));
        socket.destroy();
      }
    });
    socket.on("close", () => reject(new Error("upstream closed the connection")));
  });
}

/** The forwarder child: answers its parent's queries by asking the upstream resolver. */
export function runForwarder(upstream: Upstream): void {
  process.on("message", async (request: ForwarderRequest) => {
    const query = Buffer.from(request.query);
    let reply: ForwarderReply;
    try {
      let answer: Buffer;
      if (request.transport === "tcp") answer = await overTcp(upstream, query);
      else answer = await overUdp(upstream, query).catch(() => overUdp(upstream, query));
      reply = { id: request.id, answer };
    } catch (error) {
      reply = { id: request.id, error: (error as Error).message };
    }
    if (process.connected) process.send?.(reply);
  });
  // The parent going away takes the forwarder with it.
  process.on("disconnect", () => process.exit(0));
}
