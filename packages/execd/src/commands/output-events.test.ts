import { encodeSse } from "@paddock/common/sse";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { firstToEscape, OutputEvents } from "./output-events.js";

/** What the events were before they were built from bytes: encodeSse of the decoded text. */
const asBefore = (type: string, bytes: Uint8Array, timestamp: number) =>
  encodeSse({ type, text: Buffer.from(bytes).toString("utf8") }, timestamp);

/** Bytes that matter to the encoder: escapes, the edges of UTF-8's ranges, and plain text. */
const tricky = [
  0x00, 0x01, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1b, 0x1f, 0x20, 0x22, 0x2f, 0x5c, 0x61, 0x7f, 0x80, 0x8f, 0x90,
  0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
];
const bytes = (maxLength: number) =>
  fc.oneof(
    fc.uint8Array({ maxLength }),
    fc.array(fc.constantFrom(...tricky), { maxLength }).map((list) => Uint8Array.from(list)),
    // Mostly plain, now and then something to escape or a character: the word scan's case.
    fc
      .array(fc.oneof({ weight: 20, arbitrary: fc.constant(0x61) }, fc.constantFrom(...tricky)), {
        maxLength,
      })
      .map((list) => Uint8Array.from(list)),
  );

describe("output events built from bytes", () => {
  test("any bytes, valid UTF-8 or not, at any offset: exactly the bytes of encodeSse of their decoded text", () => {
    fc.assert(
      fc.property(
        bytes(300),
        fc.nat(7),
        fc.nat(7),
        fc.integer({ min: 0, max: 2 ** 45 }),
        (raw, front, back, now) => {
          // The text as a range of a larger buffer, as the writers hand it over.
          const source = Buffer.concat([Buffer.alloc(front, 0x0a), raw, Buffer.alloc(back, 0x22)]);
          const events = new OutputEvents();
          events.add("stdout", source, front, front + raw.length, now);
          expect(events.take()?.toString("latin1")).toBe(
            Buffer.from(asBefore("stdout", raw, now)).toString("latin1"),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("any string (its UTF-8 bytes): the same as encodeSse", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        const source = Buffer.from(text);
        const events = new OutputEvents();
        events.add("stderr", source, 0, source.length, 1);
        expect(events.take()?.toString()).toBe(encodeSse({ type: "stderr", text }, 1));
      }),
    );
  });

  test("a read's events go out together, in order, and the next read's after them", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("stdout", "stderr"), bytes(100)), { maxLength: 20 }),
        (list) => {
          const events = new OutputEvents();
          const whole = Buffer.concat(list.map(([, raw]) => raw));
          let at = 0;
          for (const [type, raw] of list) {
            events.add(type, whole, at, at + raw.length, 7);
            at += raw.length;
          }
          const first = events.take();
          events.add("stdout", Buffer.from("next"), 0, 4, 8);
          const second = events.take();
          expect(first?.toString("latin1") ?? "").toBe(
            Buffer.from(list.map(([type, raw]) => asBefore(type, raw, 7)).join("")).toString("latin1"),
          );
          expect(second?.toString()).toBe(encodeSse({ type: "stdout", text: "next" }, 8));
          expect(events.take()).toBeUndefined();
        },
      ),
    );
  });

  test("a 1 MiB event, plain or with something to escape near its end", () => {
    const plain = Buffer.alloc(2 ** 20, "a");
    const escaped = Buffer.from(plain);
    escaped[escaped.length - 3] = 0x09;
    escaped[escaped.length - 2] = 0xc3;
    escaped[escaped.length - 1] = 0xa9;
    for (const text of [plain, escaped]) {
      const events = new OutputEvents();
      events.add("stdout", text, 0, text.length, 5);
      expect(events.take()?.toString()).toBe(asBefore("stdout", text, 5));
    }
  });

  test("the word scan finds the first byte to escape wherever it is", () => {
    fc.assert(
      fc.property(
        fc.nat(200),
        fc.nat(200),
        fc.nat(7),
        fc.constantFrom(0x00, 0x0a, 0x1f, 0x22, 0x5c),
        (at, length, offset, byte) => {
          const source = Buffer.alloc(offset + length + at + 1, 0x7e).subarray(offset);
          source[at] = byte;
          expect(firstToEscape(source)).toBe(at);
          expect(firstToEscape(source, 0, at)).toBe(-1);
          expect(firstToEscape(source, at + 1)).toBe(-1);
        },
      ),
    );
  });
});
