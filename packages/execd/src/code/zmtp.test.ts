import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import {
  checkGreeting,
  decodeCommand,
  decodeMetadata,
  encodeCommand,
  encodeFrame,
  encodeGreeting,
  encodeMessage,
  encodeMetadata,
  FrameDecoder,
  GREETING_SIZE,
  ZmtpSocket,
} from "./zmtp.js";

describe("greeting", () => {
  test("64 octets: signature, version 3.0, NULL, not as-server, zero filler", () => {
    const greeting = encodeGreeting();
    expect(greeting).toHaveLength(GREETING_SIZE);
    expect([...greeting.subarray(0, 12)]).toEqual([0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0]);
    expect(greeting.subarray(12, 32).toString("ascii")).toBe(`NULL${"\0".repeat(16)}`);
    expect(greeting[32]).toBe(0);
    expect(greeting.subarray(33).every((octet) => octet === 0)).toBe(true);
  });

  test("a ZMTP 3.1 peer is accepted; ZMTP 2, another mechanism or garbage are not", () => {
    const peer = encodeGreeting();
    peer[11] = 1;
    expect(checkGreeting(peer)).toEqual({ major: 3, minor: 1 });
    const old = encodeGreeting();
    old[10] = 1;
    expect(() => checkGreeting(old)).toThrow(/3\.x is required/);
    const curve = encodeGreeting();
    curve.write("CURVE", 12, "ascii");
    expect(() => checkGreeting(curve)).toThrow(/CURVE/);
    expect(() => checkGreeting(Buffer.alloc(64, 0x41))).toThrow(/not speaking ZMTP/);
  });
});

describe("frames", () => {
  test("short frames: flags, one size octet, body; MORE on all but the last part", () => {
    expect([...encodeFrame(Buffer.from("hi"))]).toEqual([0x00, 2, 0x68, 0x69]);
    expect([...encodeFrame(Buffer.from("hi"), { more: true })]).toEqual([0x01, 2, 0x68, 0x69]);
    expect([...encodeMessage([Buffer.from("a"), Buffer.from("b")])]).toEqual([0x01, 1, 0x61, 0x00, 1, 0x62]);
    expect([...encodeFrame(Buffer.alloc(255))].slice(0, 2)).toEqual([0x00, 255]);
  });

  test("long frames: LONG flag and an eight-octet network-order size", () => {
    const frame = encodeFrame(Buffer.alloc(256, 7), { more: true });
    expect([...frame.subarray(0, 9)]).toEqual([0x03, 0, 0, 0, 0, 0, 0, 1, 0]);
    expect(frame).toHaveLength(9 + 256);
  });

  test("READY: command flag, name, and Socket-Type and Identity properties", () => {
    const ready = encodeCommand(
      "READY",
      encodeMetadata({ "Socket-Type": "DEALER", Identity: Buffer.from([9]) }),
    );
    const expected = Buffer.concat([
      Buffer.from([0x04, 42, 5]),
      Buffer.from("READY"),
      Buffer.from([11]),
      Buffer.from("Socket-Type"),
      Buffer.from([0, 0, 0, 6]),
      Buffer.from("DEALER"),
      Buffer.from([8]),
      Buffer.from("Identity"),
      Buffer.from([0, 0, 0, 1, 9]),
    ]);
    expect(ready).toEqual(expected);
    const [frame] = new FrameDecoder().push(ready);
    expect(frame?.command).toBe(true);
    const command = decodeCommand(frame?.body ?? Buffer.alloc(0));
    expect(command.name).toBe("READY");
    const properties = decodeMetadata(command.data);
    expect(properties["socket-type"]?.toString()).toBe("DEALER");
    expect(properties.identity).toEqual(Buffer.from([9]));
  });

  test("truncated metadata is an error", () => {
    const metadata = encodeMetadata({ "Socket-Type": "SUB" });
    expect(() => decodeMetadata(metadata.subarray(0, metadata.length - 1))).toThrow(/truncated/);
  });

  test("the decoder reassembles frames from chunks of any size", () => {
    const bytes = Buffer.concat([
      encodeMessage([Buffer.from("topic"), Buffer.alloc(300, 1), Buffer.from("end")]),
      encodeCommand("PING"),
    ]);
    const decoder = new FrameDecoder();
    const frames = [...bytes].flatMap((octet) => decoder.push(Buffer.from([octet])));
    expect(frames.map((frame) => [frame.more, frame.command, frame.body.length])).toEqual([
      [true, false, 5],
      [true, false, 300],
      [false, false, 3],
      [false, true, 5],
    ]);
    expect(frames[1]?.body.every((octet) => octet === 1)).toBe(true);
  });

  test("reserved flags and absurd sizes are refused", () => {
    expect(() => new FrameDecoder().push(Buffer.from([0x08, 0]))).toThrow(/reserved/);
    const huge = Buffer.from([0x02, 0xff, 0, 0, 0, 0, 0, 0, 0]);
    expect(() => new FrameDecoder().push(huge)).toThrow(/too large/);
  });
});

/** A ZMTP peer on loopback that records what the client sends and lets the test answer. */
async function peer(options: { socketType: string; refuse?: string }) {
  const received: Buffer[][] = [];
  let connection: Socket | undefined;
  let clientReady: Record<string, Buffer> = {};
  const server: Server = createServer((socket) => {
    connection = socket;
    let greeting = Buffer.alloc(0);
    const decoder = new FrameDecoder();
    let parts: Buffer[] = [];
    const greetingOf31 = encodeGreeting();
    greetingOf31[11] = 1;
    socket.write(greetingOf31);
    socket.on("data", (chunk: Buffer) => {
      let rest = chunk;
      if (greeting.length < GREETING_SIZE) {
        greeting = Buffer.concat([greeting, chunk]);
        if (greeting.length < GREETING_SIZE) return;
        checkGreeting(greeting);
        rest = greeting.subarray(GREETING_SIZE);
      }
      for (const frame of decoder.push(rest)) {
        if (frame.command) {
          clientReady = decodeMetadata(decodeCommand(frame.body).data);
          socket.write(
            options.refuse
              ? encodeCommand(
                  "ERROR",
                  Buffer.concat([Buffer.from([options.refuse.length]), Buffer.from(options.refuse)]),
                )
              : encodeCommand("READY", encodeMetadata({ "Socket-Type": options.socketType })),
          );
          continue;
        }
        parts.push(frame.body);
        if (!frame.more) {
          received.push(parts);
          parts = [];
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    received,
    ready: () => clientReady,
    write: (bytes: Buffer) => connection?.write(bytes),
    close: () => {
      connection?.destroy();
      server.close();
    },
  };
}

describe("ZmtpSocket", () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(check()).toBe(true);
  };

  test("DEALER: handshake with identity, multipart messages both ways", async () => {
    const router = await peer({ socketType: "ROUTER" });
    cleanups.push(router.close);
    const socket = await ZmtpSocket.connect({
      host: "127.0.0.1",
      port: router.port,
      type: "DEALER",
      identity: Buffer.from("me"),
    });
    cleanups.push(() => socket.close());
    expect(socket.peerSocketType).toBe("ROUTER");
    expect(router.ready()["socket-type"]?.toString()).toBe("DEALER");
    expect(router.ready().identity?.toString()).toBe("me");

    socket.send([Buffer.from("<IDS|MSG>"), Buffer.alloc(400, 2)]);
    await until(() => router.received.length === 1);
    expect(router.received[0]?.map((part) => part.length)).toEqual([9, 400]);

    const messages: Buffer[][] = [];
    socket.on("message", (message) => messages.push(message));
    const reply = Buffer.concat([
      encodeMessage([Buffer.from("a"), Buffer.from("bc")]),
      encodeCommand("PING"),
    ]);
    router.write(reply.subarray(0, 3));
    await new Promise((resolve) => setTimeout(resolve, 20));
    router.write(reply.subarray(3));
    router.write(encodeMessage([Buffer.from("second")]));
    await until(() => messages.length === 2);
    expect(messages.map((message) => message.map(String))).toEqual([["a", "bc"], ["second"]]);

    const closed = new Promise((resolve) => socket.once("close", resolve));
    router.close();
    await closed;
    expect(socket.isClosed).toBe(true);
  });

  test("SUB: subscribing to everything sends a 0x01 message", async () => {
    const publisher = await peer({ socketType: "PUB" });
    cleanups.push(publisher.close);
    const socket = await ZmtpSocket.connect({ host: "127.0.0.1", port: publisher.port, type: "SUB" });
    cleanups.push(() => socket.close());
    expect(publisher.ready()["socket-type"]?.toString()).toBe("SUB");
    expect(publisher.ready().identity).toBeUndefined();
    socket.subscribe();
    await until(() => publisher.received.length === 1);
    expect([...(publisher.received[0]?.[0] ?? [])]).toEqual([1]);
  });

  test("a peer of the wrong socket type is refused", async () => {
    const publisher = await peer({ socketType: "PUB" });
    cleanups.push(publisher.close);
    await expect(
      ZmtpSocket.connect({ host: "127.0.0.1", port: publisher.port, type: "DEALER" }),
    ).rejects.toThrow(/DEALER socket cannot talk to a PUB peer/);
  });

  test("a peer's ERROR or a closed port fails the connect", async () => {
    const refusing = await peer({ socketType: "ROUTER", refuse: "no thanks" });
    cleanups.push(refusing.close);
    await expect(
      ZmtpSocket.connect({ host: "127.0.0.1", port: refusing.port, type: "DEALER" }),
    ).rejects.toThrow(/refused: no thanks/);
    const closedPort = await peer({ socketType: "ROUTER" });
    closedPort.close();
    await expect(
      ZmtpSocket.connect({ host: "127.0.0.1", port: closedPort.port, type: "DEALER", timeoutMs: 2000 }),
    ).rejects.toThrow();
  });
});
