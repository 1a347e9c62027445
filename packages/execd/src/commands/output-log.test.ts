import { describe, expect, test } from "vitest";
import { OutputLog } from "./output-log.js";

describe("a command's output log", () => {
  test("keeps lines across chunk boundaries and reads from a cursor", () => {
    const log = new OutputLog();
    log.append("one\ntw");
    log.append("o\nthr");
    expect(log.read()).toEqual({ text: "one\ntwo\nthr", next: 2 });
    log.append("ee\n");
    expect(log.read(1)).toEqual({ text: "two\nthree\n", next: 3 });
    expect(log.read(3)).toEqual({ text: "", next: 3 });
    log.append("no newline");
    log.finish();
    expect(log.read(3)).toEqual({ text: "no newline", next: 4 });
  });

  test("drops the oldest lines past its bound and keeps cursors absolute", () => {
    const log = new OutputLog(10);
    for (let i = 0; i < 5000; i++) log.append(`${i % 10}\n`);
    // 10 characters hold the last five two-character lines.
    expect(log.read()).toEqual({ text: "5\n6\n7\n8\n9\n", next: 5000 });
    expect(log.read(0).text).toBe("5\n6\n7\n8\n9\n");
    expect(log.read(4998)).toEqual({ text: "8\n9\n", next: 5000 });
  });

  test("a long line without a newline counts against the bound", () => {
    const log = new OutputLog(100);
    log.append("x".repeat(30));
    expect(log.read(0)).toEqual({ text: "x".repeat(30), next: 1 });
    log.append("y".repeat(200));
    // Past the bound on its own: it pushes the earlier line out, and is pushed out by the next.
    expect(log.read()).toEqual({ text: "y".repeat(200), next: 2 });
    log.append("z\n");
    expect(log.read(0)).toEqual({ text: "z\n", next: 3 });
  });
});
