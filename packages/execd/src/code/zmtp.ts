/**
 * A small ZeroMQ client (ZMTP 3.0, NULL mechanism) over node:net: enough to speak to a Jupyter
 * kernel, which binds ROUTER (shell, control) and PUB (iopub) sockets on 127.0.0.1. We connect
 * as DEALER or SUB. Wire format from the public ZMTP 3.0 specification (RFC 23).
 */
import { EventEmitter } from "node:events";
import { connect, type Socket } from "node:net";

export const GREETING_SIZE = 64;
const MORE = 0x01;
const LONG = 0x02;
const COMMAND = 0x04;
/** A kernel's messages are small; anything past this is a broken peer, not a message. */
const MAX_FRAME_SIZE = 2 ** 30;

export type SocketType = "DEALER" | "SUB";

/** Which peers each of our socket types may talk to (RFC 23's socket compatibility). */
const VALID_PEERS: Record<SocketType, string[]> = {
  DEALER: ["ROUTER", "DEALER", "REP"],
  SUB: ["PUB", "XPUB"],
};

export interface Frame {
  command: boolean;
  more: boolean;
  body: Buffer;
}

/** Our greeting: signature, version 3.0, mechanism NULL, not as-server. */
export function encodeGreeting(): Buffer {
  const greeting = Buffer.alloc(GREETING_SIZE);
  greeting[0] = 0xff;
  greeting[9] = 0x7f;
  greeting[10] = 3;
  greeting[11] = 0;
  greeting.write("NULL", 12, "ascii");
  return greeting;
}

/** Checks a peer's greeting: a ZMTP 3.x peer with the NULL mechanism. */
export function checkGreeting(greeting: Buffer): { major: number; minor: number } {
  if (greeting.length < GREETING_SIZE || greeting[0] !== 0xff || greeting[9] !== 0x7f)
    throw new Error("the peer is not speaking ZMTP");
  const major = greeting[10] as number;
  const minor = greeting[11] as number;
  if (major < 3) throw new Error(`the peer speaks ZMTP ${major}.${minor}; 3.x is required`);
  const mechanism = greeting.subarray(12, 32).toString("ascii").replace(/\0+$/, "");
  if (mechanism !== "NULL") throw new Error(`the peer wants the ${mechanism} mechanism; only NULL is spoken`);
  return { major, minor };
}

/** One frame: flags, a one-octet (short) or eight-octet (long) size, the body. */
export function encodeFrame(body: Buffer, options: { more?: boolean; command?: boolean } = {}): Buffer {
  let flags = (options.more ? MORE : 0) | (options.command ? COMMAND : 0);
  if (body.length <= 255) return Buffer.concat([Buffer.from([flags, body.length]), body]);
  flags |= LONG;
  const head = Buffer.alloc(9);
  head[0] = flags;
  head.writeBigUInt64BE(BigInt(body.length), 1);
  return Buffer.concat([head, body]);
}

/** A multipart message: every frame but the last carries MORE. */
export function encodeMessage(frames: Buffer[]): Buffer {
  return Buffer.concat(frames.map((frame, index) => encodeFrame(frame, { more: index < frames.length - 1 })));
}

/** A command frame: name size, name, data. */
export function encodeCommand(name: string, data: Buffer = Buffer.alloc(0)): Buffer {
  const nameBytes = Buffer.from(name, "ascii");
  return encodeFrame(Buffer.concat([Buffer.from([nameBytes.length]), nameBytes, data]), { command: true });
}

/** READY's metadata: each property as name size (1 octet), name, value size (4 octets), value. */
export function encodeMetadata(properties: Record<string, string | Buffer>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(properties)) {
    const nameBytes = Buffer.from(name, "ascii");
    const valueBytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
    const size = Buffer.alloc(4);
    size.writeUInt32BE(valueBytes.length);
    parts.push(Buffer.from([nameBytes.length]), nameBytes, size, valueBytes);
  }
  return Buffer.concat(parts);
}

export function decodeCommand(body: Buffer): { name: string; data: Buffer } {
  const size = body[0] ?? 0;
  if (body.length < 1 + size) throw new Error("truncated command frame");
  return { name: body.subarray(1, 1 + size).toString("ascii"), data: body.subarray(1 + size) };
}

/** Property names are case-insensitive; returned lower-cased. */
export function decodeMetadata(data: Buffer): Record<string, Buffer> {
  const properties: Record<string, Buffer> = {};
  let offset = 0;
  while (offset < data.length) {
    const nameSize = data[offset] as number;
    const valueAt = offset + 1 + nameSize + 4;
    if (valueAt > data.length) throw new Error("truncated metadata");
    const name = data.subarray(offset + 1, offset + 1 + nameSize).toString("ascii");
    const valueSize = data.readUInt32BE(offset + 1 + nameSize);
    if (valueAt + valueSize > data.length) throw new Error("truncated metadata");
    properties[name.toLowerCase()] = data.subarray(valueAt, valueAt + valueSize);
    offset = valueAt + valueSize;
  }
  return properties;
}

/** Cuts a byte stream into frames, however the chunks fall. */
export class FrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const frames: Frame[] = [];
    for (;;) {
      if (this.pending.length < 2) break;
      const flags = this.pending[0] as number;
      if (flags & ~(MORE | LONG | COMMAND))
        throw new Error(`reserved frame flags set: 0x${flags.toString(16)}`);
      const long = (flags & LONG) !== 0;
      const headSize = long ? 9 : 2;
      if (this.pending.length < headSize) break;
      const size = long ? Number(this.pending.readBigUInt64BE(1)) : (this.pending[1] as number);
      if (size > MAX_FRAME_SIZE) throw new Error(`frame of ${size} bytes is too large`);
      if (this.pending.length < headSize + size) break;
      frames.push({
        command: (flags & COMMAND) !== 0,
        more: (flags & MORE) !== 0,
        body: Buffer.from(this.pending.subarray(headSize, headSize + size)),
      });
      this.pending = this.pending.subarray(headSize + size);
    }
    return frames;
  }

  /** Bytes left over, e.g. what followed the greeting in the same chunk. */
  takeRest(): Buffer {
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    return rest;
  }
}

/**
 * One connected ZeroMQ socket. Emits "message" (Buffer[]) for each complete multipart message
 * and "close" (Error | undefined) once.
 */
export class ZmtpSocket extends EventEmitter<{ message: [Buffer[]]; close: [Error | undefined] }> {
  private readonly decoder = new FrameDecoder();
  private parts: Buffer[] = [];
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    readonly peerSocketType: string,
  ) {
    super();
  }

  /** Connects, exchanges greetings and READY commands; resolves when traffic may flow. */
  static connect(options: {
    host: string;
    port: number;
    type: SocketType;
    identity?: Buffer;
    timeoutMs?: number;
  }): Promise<ZmtpSocket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: options.host, port: options.port, noDelay: true });
      let received = Buffer.alloc(0);
      let greeted = false;
      const decoder = new FrameDecoder();
      const timer = setTimeout(
        () => fail(new Error("ZMTP handshake timed out")),
        options.timeoutMs ?? 10_000,
      );
      const fail = (error: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(error);
      };
      const onData = (chunk: Buffer) => {
        try {
          let frames: Frame[] = [];
          if (!greeted) {
            received = Buffer.concat([received, chunk]);
            if (received.length < GREETING_SIZE) return;
            checkGreeting(received);
            greeted = true;
            const properties: Record<string, string | Buffer> = { "Socket-Type": options.type };
            if (options.identity) properties.Identity = options.identity;
            socket.write(encodeCommand("READY", encodeMetadata(properties)));
            frames = decoder.push(received.subarray(GREETING_SIZE));
          } else frames = decoder.push(chunk);
          const first = frames[0];
          if (!first) return;
          if (!first.command) throw new Error("the peer sent a message before READY");
          const command = decodeCommand(first.body);
          if (command.name === "ERROR")
            throw new Error(`the peer refused: ${command.data.subarray(1).toString()}`);
          if (command.name !== "READY") throw new Error(`expected READY, got ${command.name}`);
          const peerType = decodeMetadata(command.data)["socket-type"]?.toString("ascii") ?? "";
          if (!VALID_PEERS[options.type].includes(peerType))
            throw new Error(`a ${options.type} socket cannot talk to a ${peerType || "nameless"} peer`);
          clearTimeout(timer);
          socket.off("data", onData);
          socket.off("error", fail);
          socket.off("close", onEarlyClose);
          const zmtp = new ZmtpSocket(socket, peerType);
          zmtp.attach(Buffer.concat([...frames.slice(1).map(reencode), decoder.takeRest()]));
          resolve(zmtp);
        } catch (error) {
          fail(error as Error);
        }
      };
      const onEarlyClose = () => fail(new Error("the peer closed the connection during the handshake"));
      socket.on("connect", () => socket.write(encodeGreeting()));
      socket.on("data", onData);
      socket.on("error", fail);
      socket.on("close", onEarlyClose);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  send(frames: Buffer[]): void {
    if (!this.closed && !this.socket.destroyed) this.socket.write(encodeMessage(frames));
  }

  /** SUB only: subscribe to messages starting with `prefix` (empty: all), ZMTP 3.0 style. */
  subscribe(prefix: Buffer = Buffer.alloc(0)): void {
    this.send([Buffer.concat([Buffer.from([1]), prefix])]);
  }

  close(): void {
    this.socket.destroy();
  }

  /** Stops reading: the peer's messages wait in its own queue (a PUB drops past its limit). */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  private attach(leftover: Buffer): void {
    this.socket.on("data", (chunk: Buffer) => this.receive(chunk));
    this.socket.on("error", (error) => this.finish(error));
    this.socket.on("close", () => this.finish(undefined));
    if (leftover.length) this.receive(leftover);
  }

  private receive(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.finish(error as Error);
      this.socket.destroy();
      return;
    }
    for (const frame of frames) {
      // Commands after the handshake (PING, ERROR…) carry nothing a kernel client needs.
      if (frame.command) continue;
      this.parts.push(frame.body);
      if (!frame.more) {
        const message = this.parts;
        this.parts = [];
        this.emit("message", message);
      }
    }
  }

  private finish(error: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.emit("close", error);
  }
}

/** A decoded frame back to bytes (frames that arrived with the peer's READY). */
function reencode(frame: Frame): Buffer {
  return encodeFrame(frame.body, { more: frame.more, command: frame.command });
}
