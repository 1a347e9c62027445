import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type LineCut, longestLine, type OutputFraming, outputWriter } from "./output-framing.js";

function collect(framing: OutputFraming, cut: LineCut, pushes: string[]): string[] {
  const events: string[] = [];
  const writer = outputWriter(framing, cut, (text) => events.push(text) > 0);
  for (const text of pushes) writer.push(text);
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
    const writer = outputWriter("lines", "command", (line) => line !== "slow");
    expect(writer.push("fast\n")).toBe(true);
    expect(writer.push("slow\nfast\n")).toBe(false);
    expect(writer.push("slow")).toBe(true);
    expect(writer.end()).toBe(false);
  });
});
