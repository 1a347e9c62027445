import { describe, expect, test } from "vitest";
import { longestLine, outputWriter } from "./output-framing.js";

function collect(framing: "lines" | "chunks", pushes: string[]): string[] {
  const events: string[] = [];
  const writer = outputWriter(framing, (text) => events.push(text) > 0);
  for (const text of pushes) writer.push(text);
  writer.end();
  return events;
}

describe("output framing", () => {
  test("lines: one event per line, newline dropped, across chunk borders", () => {
    expect(collect("lines", ["n1\nn2\nn3\n"])).toEqual(["n1", "n2", "n3"]);
    expect(collect("lines", ["con", "nect-o", "k\nsecond"])).toEqual(["connect-ok", "second"]);
    expect(collect("lines", ["a\r\n", "\n", "b\r"])).toEqual(["a", "", "b\r"]);
    expect(collect("lines", [""])).toEqual([]);
  });

  test("lines: a line without end goes out in bounded pieces", () => {
    const events = collect("lines", ["x".repeat(longestLine + 5), "y\n"]);
    expect(events.map((event) => event.length)).toEqual([longestLine, 6]);
  });

  test("chunks: the bytes as written", () => {
    expect(collect("chunks", ["n1\nn2\n", "n3"])).toEqual(["n1\nn2\n", "n3"]);
  });

  test("a full client buffer is reported", () => {
    const writer = outputWriter("lines", (line) => line !== "slow");
    expect(writer.push("fast\n")).toBe(true);
    expect(writer.push("slow\nfast\n")).toBe(false);
    expect(writer.push("slow")).toBe(true);
    expect(writer.end()).toBe(false);
  });
});
