import { type IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { PaddockError } from "@paddock/common";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type WebSocket, WebSocketServer } from "ws";
import { ControlPlaneErrors } from "./errors.js";

const upgrade = Symbol("websocket upgrade");
type UpgradingRequest = IncomingMessage & { [upgrade]?: { socket: Duplex; head: Buffer } };

/**
 * Routes a WebSocket upgrade through Fastify like any request, so hooks (authentication) and
 * route errors answer it as plain HTTP before anything is upgraded; a route accepts it with
 * `acceptWebSocket`. Node hands upgrades only to `upgrade` listeners, never to the request
 * handler, hence this bridge.
 */
export function routeUpgrade(app: FastifyInstance) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    (req as UpgradingRequest)[upgrade] = { socket, head };
    const res = new ServerResponse(req);
    res.assignSocket(socket as never);
    // An answer that is not an upgrade ends the connection: it cannot carry a second request.
    res.on("finish", () => socket.end());
    app.routing(req, res);
  };
}

const server = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });

/** True when the request asks to become a WebSocket (and came through `routeUpgrade`). */
export function wantsWebSocket(request: FastifyRequest): boolean {
  return (request.raw as UpgradingRequest)[upgrade] !== undefined;
}

/**
 * Completes the upgrade; the reply is the socket's from here on. Rejects when the handshake is
 * refused (ws answers a malformed one with 400 itself) or the client leaves first.
 */
export function acceptWebSocket(request: FastifyRequest, reply: FastifyReply): Promise<WebSocket> {
  const pending = (request.raw as UpgradingRequest)[upgrade];
  if (!pending)
    throw new PaddockError(
      ControlPlaneErrors.websocketRequired,
      "connect with a WebSocket client to this path",
    );
  reply.hijack();
  return new Promise((resolve, reject) => {
    const gone = () => reject(new Error("the client left during the WebSocket handshake"));
    pending.socket.once("close", gone);
    server.handleUpgrade(request.raw, pending.socket, pending.head, (socket) => {
      pending.socket.off("close", gone);
      resolve(socket);
    });
  });
}

/**
 * Bytes a WebSocket may hold unsent (its `bufferedAmount`) before the sender waits: enough for
 * a terminal's bursts to flow, small enough that a client that stops reading costs the server
 * at most this much (the kernel's socket buffers aside).
 */
export const webSocketHighWater = 1024 * 1024;

/**
 * Sends one message, and when the socket holds more than `webSocketHighWater` unsent, resolves
 * only once that message has left for the network (so everything before it has too) or the
 * socket has closed. A sender that awaits this stops reading its source while the client does
 * not read, and the source's own backpressure reaches the producer.
 */
export async function sendPaced(socket: WebSocket, data: Buffer | string): Promise<void> {
  if (socket.readyState !== socket.OPEN) return;
  if (socket.bufferedAmount + data.length <= webSocketHighWater) {
    socket.send(data);
    return;
  }
  await new Promise<void>((resolve) => {
    const closed = () => resolve();
    socket.once("close", closed);
    socket.send(data, () => {
      socket.off("close", closed);
      resolve();
    });
  });
}
