import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { multipartParser, type PartSink, readMultipart } from "./multipart.js";

const boundary = "b-1";

interface Received {
  name: string;
  filename?: string;
  body: Buffer;
}

function form(parts: Array<{ name: string; filename?: string; body: Buffer }>): Buffer {
  const pieces: Buffer[] = [Buffer.from("preamble\r\n")];
  for (const part of parts) {
    const filename = part.filename === undefined ? "" : `; filename="${part.filename}"`;
    pieces.push(
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${part.name}"${filename}\r\n\r\n`),
      part.body,
      Buffer.from("\r\n"),
    );
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

/** Bytes cut at `cuts` (offsets, any order, repeats allowed). */
function split(body: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...points, body.length]) {
    chunks.push(body.subarray(start, point));
    start = point;
  }
  return chunks.filter((chunk) => chunk.length > 0);
}

/**
 * Parses `chunks` as the server does, with sinks that ask to wait where `waits` says, and keeps
 * a copy of each piece as it arrives (the parser may hand out subarrays of chunks it was given).
 */
async function parse(chunks: Buffer[], waits: boolean[] = []): Promise<Received[]> {
  const received: Received[] = [];
  let turn = 0;
  const wait = () => (waits[turn++ % Math.max(1, waits.length)] ? Promise.resolve() : undefined);
  const parser = multipartParser(boundary, (part): PartSink => {
    const pieces: Buffer[] = [];
    return {
      write: (chunk) => {
        pieces.push(Buffer.from(chunk));
        return wait();
      },
      end: async () => {
        received.push({
          name: part.name,
          ...(part.filename !== undefined ? { filename: part.filename } : {}),
          body: Buffer.concat(pieces),
        });
      },
    };
  });
  for (const chunk of chunks) await parser.push(chunk);
  await parser.end();
  return received;
}

/** Bodies rich in CR, LF, dashes and the boundary's own letters, so near-boundaries are common. */
const body = fc
  .array(fc.constantFrom("\r", "\n", "-", "b", "1", "x", `\r\n--${boundary}`.slice(0, 5), "\r\n--b-"), {
    maxLength: 40,
  })
  .map((pieces) => Buffer.from(pieces.join("")))
  // A body holding its form's delimiter is not one the client could have sent.
  .filter((bytes) => !bytes.includes(`\r\n--${boundary}`));
const part = fc.record({
  name: fc.constantFrom("metadata", "file", "other"),
  filename: fc.option(fc.constantFrom("a.txt", "b"), { nil: undefined }),
  body,
});

describe("multipartParser", () => {
  test("any body cut at any points, with or without waits, parses to the parts it was made of", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(part, { maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.array(fc.boolean(), { maxLength: 5 }),
        async (parts, cuts, waits) => {
          const whole = form(parts);
          const expected = parts.map((p) => ({
            name: p.name,
            ...(p.filename !== undefined ? { filename: p.filename } : {}),
            body: p.body,
          }));
          expect(await parse([whole])).toEqual(expected);
          expect(await parse(split(whole, cuts), waits)).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  test("a large body arrives as subarrays of the chunks it came in, not copies of them", async () => {
    const file = Buffer.alloc(4 * 64 * 1024, 7);
    const whole = form([{ name: "file", filename: "f", body: file }]);
    const chunks = split(
      whole,
      Array.from({ length: 8 }, (_, index) => (index + 1) * 64 * 1024),
    );
    const handed: Buffer[] = [];
    const parser = multipartParser(boundary, () => ({
      write: (chunk) => {
        handed.push(chunk);
        return undefined;
      },
      end: async () => undefined,
    }));
    await parser.push(chunks[0] as Buffer);
    // The first chunk, with the part's headers, is joined to what came before it; the others not.
    const fromFirst = handed.length;
    for (const chunk of chunks.slice(1)) await parser.push(chunk);
    await parser.end();
    expect(Buffer.concat(handed).equals(file)).toBe(true);
    const later = handed.slice(fromFirst).filter((piece) => piece.length > 64);
    expect(later.length).toBeGreaterThan(2);
    expect(later.every((piece) => piece.buffer === whole.buffer)).toBe(true);
  });

  test("a body that ends before its closing boundary is refused", async () => {
    const whole = form([{ name: "file", body: Buffer.from("abc") }]);
    await expect(parse([whole.subarray(0, whole.length - 10)])).rejects.toThrow(
      "the multipart body ended before its closing boundary",
    );
  });

  test("a request destroyed while a part waits fails the read instead of waiting for an end", async () => {
    const whole = form([{ name: "file", body: Buffer.alloc(4096, 1) }]);
    const req = Object.assign(new Readable({ read() {} }), {
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
    });
    req.push(whole.subarray(0, whole.length - 20));
    const reading = readMultipart(req as unknown as IncomingMessage, () => ({
      // Each write waits a little, as a busy disk does; the request goes away meanwhile.
      write: () => sleep(20),
      end: async () => undefined,
    }));
    await sleep(5);
    req.destroy();
    const outcome = await Promise.race([
      reading.then(
        () => "resolved",
        (error: Error) => error.message,
      ),
      sleep(2000).then(() => "still waiting"),
    ]);
    expect(outcome).toBe("the upload was cut off");
  });
});
