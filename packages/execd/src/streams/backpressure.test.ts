import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { EXECD_ENVD_PREFIX } from "@paddock/common/contracts";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Execd } from "../http/server.js";
import { startExecd } from "../testing.js";

/**
 * Each of execd's streams of a producer's output, read slowly (a byte a second) or not at all:
 * the producer is held back in its pipe, execd's memory does not grow with the output, and what
 * the client leaves behind is let go. The producers write 64 KiB blocks and record how many they
 * have written, so a blocked one is seen not to count on. (Through the control plane, under both
 * runtimes: test/control-plane/backpressure.test.ts.)
 */
describe("execd holds a producer back while its client does not read", () => {
  let execd: Execd;
  let port: number;
  let dir: string;
  const token = "secret";
  /** Blocks a producer writes at most (256 MiB): before backpressure it ran through them all. */
  const blocks = 4096;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "execd-backpressure-"));
    ({ execd, port } = await startExecd());
  });
  afterAll(() => {
    execd?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Attacks a stream, checks that its producer was held back, and leaves. */
  async function attackAndLeave(...args: Parameters<typeof attack>): Promise<void> {
    const result = await attack(...args);
    expectHeldBack(result);
    result.close();
  }

  /** Once its client has left, the producer writes no more: how far it got. */
  async function expectStopped(file: string): Promise<number> {
    await sleep(1500);
    const after = written(file);
    await sleep(1500);
    expect(written(file)).toBe(after);
    return after;
  }

  /** A shell producer of `blocks` blocks that counts them into `file`. */
  const shellProducer = (file: string) =>
    `for i in $(seq 1 ${blocks}); do printf '%65536s' ''; echo $i > ${file}; done`;
  /** The same, as a JavaScript cell (its stdout is a pipe, written synchronously). */
  const cellProducer = (file: string) =>
    `const fs = require("node:fs"); for (let i = 1; i <= ${blocks}; i++) { process.stdout.write("A".repeat(65536)); fs.writeFileSync(${JSON.stringify(file)}, String(i)); }`;

  const written = (file: string) => {
    try {
      return Number(readFileSync(file, "utf8").trim()) || 0;
    } catch {
      return 0;
    }
  };

  /**
   * Opens the stream, reads it as `reading` says, and answers how many blocks were written 2 s
   * in and 5 s in, and how much this process (execd's) grew meanwhile.
   */
  async function attack(
    path: string,
    body: Buffer,
    headers: Record<string, string>,
    file: string,
    reading: "unread" | "slow",
  ): Promise<{ early: number; late: number; growthMiB: number; close(): void }> {
    const rssBefore = process.memoryUsage().rss;
    let request: ClientRequest | undefined;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<IncomingMessage>((resolve, reject) => {
      request = httpRequest(
        { port, path, method: "POST", agent: false, headers: { "x-execd-access-token": token, ...headers } },
        (response) => {
          if (response.statusCode !== 200) reject(new Error(`answered ${response.statusCode}`));
          if (reading === "slow") timer = setInterval(() => response.read(1), 1000);
          resolve(response);
        },
      );
      request.on("error", () => {});
      request.end(body);
    });
    await sleep(2000);
    const early = written(file);
    let peak = process.memoryUsage().rss;
    for (let i = 0; i < 12; i++) {
      await sleep(250);
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    return {
      early,
      late: written(file),
      growthMiB: (peak - rssBefore) / 2 ** 20,
      close() {
        clearInterval(timer);
        request?.destroy();
      },
    };
  }

  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const jsonHeaders = { "content-type": "application/json" };

  /** What is held back: blocked in its pipe (at most the pipe's and the socket's few blocks more). */
  const expectHeldBack = (result: { early: number; late: number; growthMiB: number }) => {
    expect(result.late).toBeLessThan(blocks);
    expect(result.late - result.early).toBeLessThanOrEqual(2);
    expect(result.growthMiB).toBeLessThan(64);
  };

  test.each(["unread", "slow"] as const)(
    "POST /command, read %s: the command is killed when the client leaves",
    async (reading) => {
      const file = join(dir, `command-${reading}`);
      await attackAndLeave("/command", json({ command: shellProducer(file) }), jsonHeaders, file, reading);
      await expectStopped(file);
    },
  );

  test.each(["unread", "slow"] as const)(
    "a session's run, read %s: the session is free again once the client leaves",
    async (reading) => {
      const file = join(dir, `session-${reading}`);
      const session = (await (
        await fetch(`http://127.0.0.1:${port}/session`, {
          method: "POST",
          headers: { "x-execd-access-token": token, ...jsonHeaders },
          body: "{}",
        })
      ).json()) as { session_id: string };
      await attackAndLeave(
        `/session/${session.session_id}/run`,
        json({ command: shellProducer(file) }),
        jsonHeaders,
        file,
        reading,
      );
      // Nobody reads the rest: the run goes on to its end, its output dropped, and the shell is
      // the session's again.
      await expect.poll(() => written(file), { timeout: 60_000, interval: 500 }).toBe(blocks);
      const next = await fetch(`http://127.0.0.1:${port}/session/${session.session_id}/run`, {
        method: "POST",
        headers: { "x-execd-access-token": token, ...jsonHeaders },
        body: JSON.stringify({ command: "echo still here" }),
      });
      expect(await next.text()).toContain("still here");
    },
  );

  test.each(["unread", "slow"] as const)(
    "a JavaScript cell on /code, read %s: the cell is interrupted when the client leaves",
    async (reading) => {
      const file = join(dir, `cell-${reading}`);
      await attackAndLeave(
        "/code",
        json({ context: { language: "javascript" }, code: cellProducer(file) }),
        jsonHeaders,
        file,
        reading,
      );
      expect(await expectStopped(file)).toBeLessThan(blocks);
    },
  );

  test.each(["unread", "slow"] as const)("envd's process.Process/Start, read %s", async (reading) => {
    const file = join(dir, `envd-${reading}`);
    const message = json({ process: { cmd: "/bin/sh", args: ["-c", shellProducer(file)] }, stdin: false });
    const head = Buffer.alloc(5);
    head.writeUInt32BE(message.length, 1);
    const result = await attack(
      `${EXECD_ENVD_PREFIX}/process.Process/Start`,
      Buffer.concat([head, message]),
      { "content-type": "application/connect+json" },
      file,
      reading,
    );
    expectHeldBack(result);
    // envd's processes outlive their streams (as E2B's do): its output is dropped once nobody
    // watches, so it runs to its end without growing execd.
    result.close();
    await expect.poll(() => written(file), { timeout: 60_000, interval: 500 }).toBe(blocks);
  });
});
