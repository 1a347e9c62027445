import { EXECD_ENVD_PREFIX, EXECD_ENVD_USER_ENV } from "@paddock/common/contracts";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Execd } from "../http/server.js";
import { startExecd } from "../testing.js";

/**
 * `process.Process` on the wire, against an execd in this process: what a Connect client that
 * is not E2B's SDK (or a broken one) may send. The stock SDK's own calls are covered end to end
 * in test/e2b/commands.test.ts and pty.test.ts.
 */
describe("envd's process service over Connect", () => {
  let execd: Execd;
  let base: string;
  const headers = { "x-execd-access-token": "secret" };

  beforeAll(async () => {
    ({ execd, base } = await startExecd());
    base += `${EXECD_ENVD_PREFIX}/process.Process`;
  });
  afterAll(() => execd?.close());

  const unary = async (method: string, body: unknown) => {
    const response = await fetch(`${base}/${method}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  /** A server stream's messages as they come, the end-of-stream message last. */
  async function* stream(
    method: string,
    body: unknown,
    extra: Record<string, string> = {},
    signal?: AbortSignal,
  ) {
    const json = Buffer.from(JSON.stringify(body));
    const head = Buffer.alloc(5);
    head.writeUInt32BE(json.length, 1);
    const response = await fetch(`${base}/${method}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/connect+json", ...extra },
      body: Buffer.concat([head, json]),
      ...(signal ? { signal } : {}),
    });
    let buffered = Buffer.alloc(0);
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
        const length = buffered.readUInt32BE(1);
        const flags = buffered.readUInt8(0);
        yield { end: (flags & 0x02) !== 0, message: JSON.parse(buffered.subarray(5, 5 + length).toString()) };
        buffered = buffered.subarray(5 + length);
      }
    }
  }
  const collect = async (method: string, body: unknown, extra: Record<string, string> = {}) => {
    const messages = [];
    for await (const message of stream(method, body, extra)) messages.push(message);
    return messages;
  };
  const decoded = (messages: { message: any }[], field: string) =>
    messages
      .map(({ message }) => message.event?.data?.[field])
      .filter(Boolean)
      .map((data: string) => Buffer.from(data, "base64").toString())
      .join("");

  test("Start streams start, stdout and stderr as base64, and the end", async () => {
    const messages = await collect("Start", {
      process: { cmd: "/bin/sh", args: ["-c", "echo out; echo err >&2; exit 2"] },
      stdin: false,
    });
    expect(messages[0]).toEqual({ end: false, message: { event: { start: { pid: expect.any(Number) } } } });
    expect(decoded(messages, "stdout")).toBe("out\n");
    expect(decoded(messages, "stderr")).toBe("err\n");
    expect(messages.at(-2)?.message).toEqual({
      event: { end: { exitCode: 2, exited: true, status: "exit status 2", error: "exit status 2" } },
    });
    expect(messages.at(-1)).toEqual({ end: true, message: {} });
  });

  test("malformed requests are refused with invalid_argument; unknown processes are not_found", async () => {
    const refusedStart = await collect("Start", { process: { cmd: "" } });
    expect(refusedStart).toEqual([
      { end: true, message: { error: { code: "invalid_argument", message: "process.cmd is required" } } },
    ]);
    expect(await unary("SendInput", { process: { pid: 1 }, input: { stdin: "%%%" } })).toMatchObject({
      status: 400,
      body: { code: "invalid_argument" },
    });
    expect(await unary("SendSignal", { process: { pid: 4_000_000 }, signal: "SIGNAL_SIGKILL" })).toEqual({
      status: 404,
      body: { code: "not_found", message: "process with pid 4000000 not found" },
    });
    expect(await unary("SendSignal", { process: { tag: "nobody-has-it" }, signal: 9 })).toMatchObject({
      status: 404,
    });
    const connected = await collect("Connect", { process: { pid: 4_000_000 } });
    expect(connected).toEqual([
      { end: true, message: { error: { code: "not_found", message: "process with pid 4000000 not found" } } },
    ]);
    const missing = await collect("Start", { process: { cmd: "/no/such/program" } });
    expect(missing.at(-1)?.message.error).toMatchObject({
      code: "not_found",
      message: expect.stringContaining("cannot start /no/such/program"),
    });
    const streamInput = await collect("StreamInput", { start: { process: { pid: 1 } } });
    expect(streamInput.at(-1)?.message.error).toMatchObject({ code: "unimplemented" });
  });

  test("a tagged process: listed with its tag, selected by it; input it cannot take is refused clearly", async () => {
    const events = stream("Start", {
      process: { cmd: "/bin/sh", args: ["-c", "sleep 30"], envs: { X: "1" } },
      tag: "sleeper",
      stdin: false,
    });
    const first = await events.next();
    const pid = first.value?.message.event.start.pid;
    const { body } = await unary("List", {});
    expect(body.processes).toContainEqual({
      config: { cmd: "/bin/sh", args: ["-c", "sleep 30"], envs: { X: "1" } },
      pid,
      tag: "sleeper",
    });
    expect(await unary("SendInput", { process: { tag: "sleeper" }, input: { stdin: "eA==" } })).toMatchObject(
      {
        status: 400,
        body: { code: "failed_precondition", message: expect.stringContaining("without stdin") },
      },
    );
    expect(await unary("Update", { process: { pid }, pty: { size: { cols: 80, rows: 24 } } })).toMatchObject({
      status: 400,
      body: { code: "failed_precondition", message: expect.stringContaining("not started with a pty") },
    });
    expect(await unary("SendSignal", { process: { tag: "sleeper" }, signal: "SIGNAL_SIGTERM" })).toEqual({
      status: 200,
      body: {},
    });
    const rest = [];
    for await (const message of events) rest.push(message);
    expect(rest.at(-2)?.message.event.end).toMatchObject({ exitCode: -1, status: "signal: terminated" });
  });

  test("keepalives come at the interval the client asks for", async () => {
    const messages = await collect(
      "Start",
      { process: { cmd: "/bin/sh", args: ["-c", "sleep 2.5"] } },
      { "keepalive-ping-interval": "1" },
    );
    const keepalives = messages.filter(({ message }) => message.event?.keepalive);
    expect(keepalives.length).toBeGreaterThanOrEqual(2);
    expect(keepalives[0]?.message).toEqual({ event: { keepalive: {} } });
  });

  test("a deadline longer than a timer can wait is no deadline, not an instant one", async () => {
    const messages = await collect(
      "Start",
      { process: { cmd: "/bin/sh", args: ["-c", "sleep 0.3; echo in-time"] } },
      { "connect-timeout-ms": "3000000000" },
    );
    expect(decoded(messages, "stdout")).toBe("in-time\n");
    expect(messages.at(-1)).toEqual({ end: true, message: {} });
  });

  test("the Start stream's client going away leaves the process running", async () => {
    const controller = new AbortController();
    const events = stream(
      "Start",
      { process: { cmd: "/bin/sh", args: ["-c", "sleep 1; echo late"] } },
      {},
      controller.signal,
    );
    const pid = (await events.next()).value?.message.event.start.pid;
    await events.return(undefined);
    controller.abort();
    const connected = await collect("Connect", { process: { pid } });
    expect(connected[0]?.message).toEqual({ event: { start: { pid } } });
    expect(decoded(connected, "stdout")).toBe("late\n");
    expect(connected.at(-2)?.message.event.end).toMatchObject({ exitCode: 0 });
  });
});

describe("envd's processes in a sandbox whose image names a default user", () => {
  let execd: Execd;
  let base: string;

  beforeAll(async () => {
    process.env[EXECD_ENVD_USER_ENV] = "nobody";
    ({ execd, base } = await startExecd());
    base += `${EXECD_ENVD_PREFIX}/process.Process`;
  });
  afterAll(() => {
    delete process.env[EXECD_ENVD_USER_ENV];
    execd?.close();
  });

  /** What a `bash -l -c` Start prints (E2B's commands.run: the warm shell's kind of command). */
  const output = async (command: string, user?: string) => {
    const json = Buffer.from(JSON.stringify({ process: { cmd: "/bin/bash", args: ["-l", "-c", command] } }));
    const head = Buffer.alloc(5);
    head.writeUInt32BE(json.length, 1);
    const response = await fetch(`${base}/Start`, {
      method: "POST",
      headers: {
        "x-execd-access-token": "secret",
        "content-type": "application/connect+json",
        ...(user ? { authorization: `Basic ${Buffer.from(`${user}:`).toString("base64")}` } : {}),
      },
      body: Buffer.concat([head, json]),
    });
    const body = Buffer.from(await response.arrayBuffer());
    let text = "";
    for (let at = 0; at + 5 <= body.length; at += 5 + body.readUInt32BE(at + 1)) {
      const data = JSON.parse(body.subarray(at + 5, at + 5 + body.readUInt32BE(at + 1)).toString()).event
        ?.data;
      if (data?.stdout) text += Buffer.from(data.stdout, "base64").toString();
    }
    return text;
  };

  test("calls that name no user run as it, warm shell or cold; a named user as itself", async () => {
    const pids = new Set<string>();
    for (let run = 0; run < 3; run++) {
      const [name, home, pid] = (await output('id -un; echo "$HOME"; echo $$')).split("\n");
      expect({ name, home }).toEqual({ name: "nobody", home: "/nonexistent" });
      pids.add(pid as string);
    }
    expect(pids.size).toBe(3);
    expect(await output("id -un", "root")).toBe("root\n");
  });
});
