import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type LineCut, longestLine, type OutputFraming, outputWriter } from "./output-framing.js";

function collect(framing: OutputFraming, cut: LineCut, pushes: string[]): string[] {
  const events: string[] = [];
  const writer = outputWriter(
    framing,
    cut,
    (bytes, start, end) => events.push(bytes.toString("utf8", start, end)) > 0,
  );
  for (const text of pushes) writer.push(Buffer.from(text));
  writer.end();
  return events;
}

describe("output framing", () => {
  test.each(["command", "session"] as const)(
    "%s lines: one event per line, newline dropped, across chunk borders",
    (cut) => {
      expect(collect("lines", cut, ["n1\nn2\nn3\n"])).toEqual(["n1", "n2", "n3"]);
      expect(collect("lines", cut, ["con", "nect-o", "k\nsecond"])).toEqual(["connect-ok", "second"]);
      expect(collect("lines", cut, [""])).toEqual([]);
    },
  );

  test("command lines: cut at \\n or \\r, \\r\\n once, a blank line as \\n (OpenSandbox's command output)", () => {
    expect(collect("lines", "command", ["a\n\nb\n"])).toEqual(["a", "\n", "b"]);
    expect(collect("lines", "command", ["\n"])).toEqual(["\n"]);
    expect(collect("lines", "command", ["a\r\nb\r\n"])).toEqual(["a", "b"]);
    expect(collect("lines", "command", ["a\r", "\nb"])).toEqual(["a", "b"]);
    expect(collect("lines", "command", [" 10%\r 50%\r100%\ndone\n"])).toEqual([
      " 10%",
      " 50%",
      "100%",
      "done",
    ]);
    expect(collect("lines", "command", ["a\r\r\n"])).toEqual(["a", "\n"]);
    expect(collect("lines", "command", ["a\r", "\r", "\n"])).toEqual(["a", "\n"]);
  });

  test("command lines: any output, cut into any chunks, gives the events of OpenSandbox's byte-by-byte tail", () => {
    // The model: OpenSandbox's readFromPos, one byte at a time, with the rest flushed at exit.
    const model = (output: string): string[] => {
      const events: string[] = [];
      let line = "";
      let lastWasCarriageReturn = false;
      for (const char of output) {
        if (char === "\n" || char === "\r") {
          if (line !== "") events.push(line);
          else if (!(char === "\n" && lastWasCarriageReturn)) events.push("\n");
          line = "";
          lastWasCarriageReturn = char === "\r";
        } else {
          line += char;
          lastWasCarriageReturn = false;
        }
      }
      if (line !== "") events.push(line);
      return events;
    };
    const output = fc
      .array(fc.constantFrom("a", "b", "\r", "\n"), { maxLength: 40 })
      .map((chars) => chars.join(""));
    fc.assert(
      fc.property(output, fc.array(fc.nat(40), { maxLength: 6 }), (text, cuts) => {
        const borders = [...new Set(cuts.map((cut) => Math.min(cut, text.length)))].sort((x, y) => x - y);
        const chunks = [0, ...borders].map((from, k) => text.slice(from, [...borders, text.length][k]));
        expect(collect("lines", "command", chunks)).toEqual(model(text));
      }),
    );
  });

  test("session lines: cut as Go's bufio.ScanLines (OpenSandbox's session output)", () => {
    expect(collect("lines", "session", ["a\r\n", "\n", "b\r"])).toEqual(["a", "", "b\r"]);
    expect(collect("lines", "session", ["10%\r100%\n"])).toEqual(["10%\r100%"]);
  });

  test.each(["command", "session"] as const)(
    "%s lines: a line without end goes out in bounded pieces",
    (cut) => {
      const events = collect("lines", cut, ["x".repeat(longestLine + 5), "y\n"]);
      expect(events.map((event) => event.length)).toEqual([longestLine, 6]);
    },
  );

  test("chunks: the bytes as written", () => {
    expect(collect("chunks", "command", ["n1\nn2\n", "n3"])).toEqual(["n1\nn2\n", "n3"]);
  });

  test("a full client buffer is reported", () => {
    const writer = outputWriter(
      "lines",
      "command",
      (bytes, start, end) => bytes.toString("utf8", start, end) !== "slow",
    );
    expect(writer.push(Buffer.from("fast\n"))).toBe(true);
    expect(writer.push(Buffer.from("slow\nfast\n"))).toBe(false);
    expect(writer.push(Buffer.from("slow"))).toBe(true);
    expect(writer.end()).toBe(false);
  });
});

/** The events of `output` pushed in pieces cut at `cuts` (byte offsets), each event decoded. */
function collectBytes(framing: OutputFraming, cut: LineCut, output: Uint8Array, cuts: number[]): string[] {
  const borders = [...new Set(cuts.map((at) => Math.min(at, output.length)))].sort((x, y) => x - y);
  const events: string[] = [];
  const writer = outputWriter(
    framing,
    cut,
    (bytes, start, end) => events.push(bytes.toString("utf8", start, end)) > 0,
  );
  [0, ...borders].forEach((from, k) => {
    writer.push(Buffer.from(output.subarray(from, [...borders, output.length][k])));
  });
  writer.end();
  return events;
}

describe("output framing of bytes", () => {
  /** Text with line ends and characters of every UTF-8 length, and now and then a byte that is no UTF-8. */
  const output = fc
    .array(
      fc.oneof(
        fc.constantFrom("a", "\n", "\r", "é", "€", "😀", "\t"),
        fc
          .constantFrom(0x80, 0xbf, 0xc0, 0xc3, 0xe0, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff)
          .map((byte) => Buffer.from([byte])),
      ),
      { maxLength: 40 },
    )
    .map((parts) =>
      Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part))),
    );
  const cuts = fc.array(fc.nat(120), { maxLength: 8 });
  const decoded = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

  test("command lines: however the reads cut the bytes, the events are those of the whole output decoded", () => {
    fc.assert(
      fc.property(output, cuts, (bytes, at) => {
        expect(collectBytes("lines", "command", bytes, at)).toEqual(
          collect("lines", "command", [decoded(bytes)]),
        );
      }),
    );
  });

  test("session lines: the same", () => {
    fc.assert(
      fc.property(output, cuts, (bytes, at) => {
        expect(collectBytes("lines", "session", bytes, at)).toEqual(
          collect("lines", "session", [decoded(bytes)]),
        );
      }),
    );
  });

  test("chunks: a character split between reads arrives whole, and the events make up the whole output", () => {
    fc.assert(
      fc.property(output, cuts, (bytes, at) => {
        const events = collectBytes("chunks", "command", bytes, at);
        expect(events.join("")).toBe(decoded(bytes));
        expect(events.every((event) => event !== "")).toBe(true);
      }),
    );
    expect(collectBytes("chunks", "command", Buffer.from("a€b"), [2, 3])).toEqual(["a", "€b"]);
  });

  test.each(["command", "session"] as const)(
    "%s lines: a long line's pieces are at most 1 MiB and cut no character",
    (cut) => {
      // 4-byte characters after one plain byte, read 64 KiB at a time: a cut at 1 MiB falls inside one.
      const line = Buffer.concat([Buffer.from("x"), Buffer.from("😀".repeat(longestLine / 2))]);
      const reads = Array.from({ length: Math.ceil(line.length / 65536) }, (_, k) => (k + 1) * 65536);
      const events = collectBytes("lines", cut, Buffer.concat([line, Buffer.from("\n")]), reads);
      expect(events.length).toBeGreaterThan(1);
      for (const event of events) {
        expect(Buffer.byteLength(event)).toBeLessThanOrEqual(longestLine);
        expect(event).not.toContain("\ufffd");
      }
      expect(events.join("")).toBe(line.toString());
    },
  );
});
