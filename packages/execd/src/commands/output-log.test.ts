import { describe, expect, test } from "vitest";
import { OutputLog } from "./output-log.js";

describe("a command's output log", () => {
  test("keeps lines across chunk boundaries and reads from a cursor", () => {
    const log = new OutputLog();
    log.append(Buffer.from("one\ntw"));
    log.append(Buffer.from("o\nthr"));
    expect(log.read()).toEqual({ text: "one\ntwo\nthr", next: 2 });
    log.append(Buffer.from("ee\n"));
    expect(log.read(1)).toEqual({ text: "two\nthree\n", next: 3 });
    expect(log.read(3)).toEqual({ text: "", next: 3 });
    log.append(Buffer.from("no newline"));
    log.finish();
    expect(log.read(3)).toEqual({ text: "no newline", next: 4 });
  });

  test("drops the oldest lines past its bound and keeps cursors absolute", () => {
    const log = new OutputLog(10);
    for (let i = 0; i < 5000; i++) log.append(Buffer.from(`${i % 10}\n`));
    // 10 characters hold the last five two-character lines.
    expect(log.read()).toEqual({ text: "5\n6\n7\n8\n9\n", next: 5000 });
    expect(log.read(0).text).toBe("5\n6\n7\n8\n9\n");
    expect(log.read(4998)).toEqual({ text: "8\n9\n", next: 5000 });
  });

  test("a long line without a newline counts against the bound", () => {
    const log = new OutputLog(100);
    log.append(Buffer.from("x".repeat(30)));
    expect(log.read(0)).toEqual({ text: "x".repeat(30), next: 1 });
    log.append(Buffer.from("y".repeat(200)));
    // Past the bound on its own: it pushes the earlier line out, and is pushed out by the next.
    expect(log.read()).toEqual({ text: "y".repeat(200), next: 2 });
    log.append(Buffer.from("z\n"));
    expect(log.read(0)).toEqual({ text: "z\n", next: 3 });
  });

  test("a character split across two reads, or across a long line's pieces, reads whole", () => {
    const log = new OutputLog(40);
    log.append(Buffer.from([0x61, 0xe2, 0x82]));
    log.append(Buffer.from([0xac, 0x0a]));
    expect(log.read()).toEqual({ text: "a€\n", next: 1 });
    // Past a quarter of the bound without a newline: kept in pieces, the last "€" split between them.
    const euro = Buffer.from("x€€€€");
    log.append(euro.subarray(0, 11));
    log.append(euro.subarray(11));
    log.finish();
    expect(log.read(1).text).toBe("x€€€€");
  });
});
