import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { fileWriter, uploadPiece } from "./file-writer.js";

describe("fileWriter", () => {
  it("gathers a part's 64 KiB chunks into writes of a piece each, bytes in order", async () => {
    const writes: number[] = [];
    const received: Buffer[] = [];
    const file = new Writable({
      highWaterMark: 2 * uploadPiece,
      write(chunk: Buffer, _encoding, callback) {
        writes.push(chunk.length);
        received.push(chunk);
        callback();
      },
      writev(chunks, callback) {
        writes.push(chunks.reduce((total, { chunk }) => total + (chunk as Buffer).length, 0));
        for (const { chunk } of chunks) received.push(chunk as Buffer);
        callback();
      },
    });
    const writer = fileWriter(Promise.resolve(file));
    const chunks = Array.from({ length: 40 }, (_, index) => Buffer.alloc(64 * 1024, index));
    for (const chunk of chunks) await writer.write(chunk);
    await writer.end();
    expect(writes).toEqual([uploadPiece, uploadPiece, 40 * 64 * 1024 - 2 * uploadPiece]);
    expect(Buffer.concat(received).equals(Buffer.concat(chunks))).toBe(true);
  });

  it("fails the next write once a piece failed, instead of waiting for the file", async () => {
    const file = new Writable({
      highWaterMark: 2 * uploadPiece,
      writev(_chunks, callback) {
        callback(new Error("disk full"));
      },
    });
    file.on("error", () => undefined);
    const writer = fileWriter(Promise.resolve(file));
    const write = async () => {
      // Each chunk a turn of the event loop apart, as the socket delivers them.
      for (let index = 0; index < 64; index++) {
        await new Promise((resolve) => setImmediate(resolve));
        await writer.write(Buffer.alloc(64 * 1024));
      }
      await writer.end();
    };
    await expect(write()).rejects.toThrow("disk full");
  });
});
