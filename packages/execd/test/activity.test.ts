import { EXECD_CODE_INTERPRETER_PREFIX, EXECD_ENVD_PREFIX, SseParser } from "@paddock/common";
import { describe, expect, test } from "vitest";
import { type ExecdClient, sandboxPerSuite } from "./client.js";

/** A request whose answer is left open: aborting it is the client going away. */
interface OpenRequest {
  /** The first thing the stream said: a command's id, a terminal's id, a process's pid. */
  first: string;
  abort(): void;
}

/** POSTs for an SSE stream and reads it until its `init` event, then goes on reading in the background. */
async function openStream(execd: ExecdClient, path: string, body: unknown): Promise<OpenRequest> {
  const controller = new AbortController();
  const response = await execd.fetch(path, {
    method: "POST",
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  expect(response.status, path).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${path} ended before its init event`);
    const init = parser.push(decoder.decode(value, { stream: true })).find((event) => event.type === "init");
    if (init) {
      void (async () => {
        while (!(await reader.read()).done);
      })().catch(() => undefined);
      return { first: String(init.text), abort: () => controller.abort() };
    }
  }
}

/** envd's Start over Connect (one enveloped JSON message), read until its `start` event. */
async function startEnvdProcess(execd: ExecdClient, cmd: string, args: string[]): Promise<OpenRequest> {
  const json = Buffer.from(JSON.stringify({ process: { cmd, args }, stdin: false }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  const controller = new AbortController();
  const response = await execd.fetch(`${EXECD_ENVD_PREFIX}/process.Process/Start`, {
    method: "POST",
    headers: { "content-type": "application/connect+json" },
    body: Buffer.concat([head, json]),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let buffered = Buffer.alloc(0);
  while (buffered.length < 5 || buffered.length < 5 + buffered.readUInt32BE(1)) {
    const { value, done } = await reader.read();
    if (done) throw new Error("Start ended before its start event");
    buffered = Buffer.concat([buffered, value]);
  }
  const message = JSON.parse(buffered.subarray(5, 5 + buffered.readUInt32BE(1)).toString());
  const pid = message.event?.start?.pid;
  expect(pid).toEqual(expect.any(Number));
  return { first: String(pid), abort: () => controller.abort() };
}

describe.each(["gvisor", "runc"] as const)("execd's activity under %s", (secure) => {
  let execd: ExecdClient;
  sandboxPerSuite(
    secure,
    { image: { uri: "paddock/template-python:latest" } },
    (made) => {
      execd = made;
    },
    async () => {
      const setup = await execd.run("mkdir -p /workspace && head -c 67108864 /dev/zero > /tmp/large");
      expect(setup.exitCode).toBe(0);
    },
  );

  const activity = async () => {
    const response = await execd.fetch("/activity");
    expect(response.status).toBe(200);
    return (await response.json()) as { running: number; requests: number };
  };
  /** Waits for execd to report `expected` (what ends or is killed takes a moment to be reaped). */
  const settlesAt = (expected: { running: number; requests: number }) =>
    expect.poll(activity, { timeout: 20_000, interval: 100 }).toEqual(expected);

  test("an idle execd reports nothing running and no requests; a finished command does not count", async () => {
    await settlesAt({ running: 0, requests: 0 });
    const done = await execd.run("echo done");
    expect(done.stdout).toBe("done\n");
    expect((await activity()).running).toBe(0);
    const background = await execd.events("/command", { command: "echo kept in the log", background: true });
    const id = String(background[0]?.text);
    await expect
      .poll(async () => (await execd.json(`/command/status/${id}`)).running, { timeout: 20_000 })
      .toBe(false);
    // Its log is still kept, and the command is over.
    expect(await (await execd.fetch(`/command/${id}/logs`)).text()).toBe("kept in the log\n");
    expect(await activity()).toEqual({ running: 0, requests: 0 });
  });

  test("GET /activity needs the sandbox's token", async () => {
    expect((await execd.fetch("/activity")).status).toBe(200);
    const none = await fetch(`${execd.base}/activity`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: "unauthorized" });
    const wrong = await fetch(`${execd.base}/activity`, { headers: { "X-EXECD-ACCESS-TOKEN": "wrong" } });
    expect(wrong.status).toBe(401);
  });

  test("each thing execd starts counts while it runs, and stops counting when it ends or is killed", async () => {
    const sleep = "sleep 30";
    // Background: its stream ends at once, the command goes on.
    const background = await execd.events("/command", { command: sleep, background: true });
    const backgroundId = String(background[0]?.text);
    await settlesAt({ running: 1, requests: 0 });

    // Foreground: runs while its stream stays open.
    const foreground = await openStream(execd, "/command", { command: sleep });
    await settlesAt({ running: 2, requests: 1 });

    const { session_id: session } = await execd.json("/session", { method: "POST", body: "{}" });
    await openStream(execd, `/session/${session}/run`, { command: sleep });
    await settlesAt({ running: 3, requests: 2 });

    const terminal = await openStream(execd, "/pty", { command: sleep });
    await settlesAt({ running: 4, requests: 3 });

    // A stateless /code run: its context goes when the client does.
    const cell = await openStream(execd, "/code", { code: "import time\ntime.sleep(30)" });
    await settlesAt({ running: 5, requests: 4 });

    // envd's Start: the process outlives its stream, as E2B's does.
    const envdProcess = await startEnvdProcess(execd, "/bin/sleep", ["30"]);
    await settlesAt({ running: 6, requests: 5 });
    envdProcess.abort();
    await settlesAt({ running: 6, requests: 4 });

    // The code interpreter's /execute, on the default Python context.
    const interpreter = new AbortController();
    const execution = await execd.fetch(`${EXECD_CODE_INTERPRETER_PREFIX}/execute`, {
      method: "POST",
      body: JSON.stringify({ code: "import time\ntime.sleep(30)" }),
      signal: interpreter.signal,
    });
    expect(execution.status).toBe(200);
    await settlesAt({ running: 7, requests: 5 });

    // An isolated session's background run, counted by the session's agent.
    const created = await execd.fetch("/v1/isolated/session", {
      method: "POST",
      body: JSON.stringify({ workspace: { path: "/workspace", mode: "overlay" } }),
    });
    expect(created.status).toBe(201);
    const { session_id: isolated } = (await created.json()) as { session_id: string };
    const run = await execd.fetch(`/v1/isolated/session/${isolated}/run`, {
      method: "POST",
      body: JSON.stringify({ code: sleep, background: true }),
    });
    expect(run.status).toBe(202);
    await settlesAt({ running: 8, requests: 5 });

    // Each ends in its own way, and the count follows.
    expect((await execd.fetch(`/v1/isolated/session/${isolated}`, { method: "DELETE" })).status).toBe(200);
    await settlesAt({ running: 7, requests: 5 });
    interpreter.abort();
    await settlesAt({ running: 6, requests: 4 });
    const killed = await execd.fetch(`${EXECD_ENVD_PREFIX}/process.Process/SendSignal`, {
      method: "POST",
      body: JSON.stringify({ process: { pid: Number(envdProcess.first) }, signal: "SIGNAL_SIGKILL" }),
    });
    expect(killed.status).toBe(200);
    await settlesAt({ running: 5, requests: 4 });
    cell.abort();
    await settlesAt({ running: 4, requests: 3 });
    expect((await execd.fetch(`/pty/${terminal.first}`, { method: "DELETE" })).status).toBe(200);
    await settlesAt({ running: 3, requests: 2 });
    expect((await execd.fetch(`/session/${session}`, { method: "DELETE" })).status).toBe(200);
    await settlesAt({ running: 2, requests: 1 });
    foreground.abort();
    await settlesAt({ running: 1, requests: 0 });
    const interrupted = await execd.json(`/command?id=${backgroundId}`, { method: "DELETE" });
    expect(interrupted).toEqual({ id: backgroundId, interrupted: true });
    await settlesAt({ running: 0, requests: 0 });
  });

  test("an open download counts as a request while it lasts, not as something running", async () => {
    const controller = new AbortController();
    const download = await execd.fetch("/files/download?path=/tmp/large", { signal: controller.signal });
    expect(download.status).toBe(200);
    // One chunk read, the rest left waiting: execd holds the response open behind the client.
    const reader = (download.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).done).toBe(false);
    await settlesAt({ running: 0, requests: 1 });
    controller.abort();
    await settlesAt({ running: 0, requests: 0 });
  });

  test("a thousand concurrent questions count neither themselves nor each other, and execd lives on", async () => {
    const background = await execd.events("/command", { command: "sleep 60", background: true });
    const id = String(background[0]?.text);
    await settlesAt({ running: 1, requests: 0 });
    const answers = await Promise.all(
      Array.from({ length: 1000 }, async () => {
        const response = await execd.fetch("/activity");
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(answers.filter((answer) => answer.body.running !== 1 || answer.body.requests !== 0)).toEqual([]);
    // Still serving: the command is where it was, and a new one runs.
    expect((await execd.json(`/command/status/${id}`)).running).toBe(true);
    expect((await execd.run("echo alive")).stdout).toBe("alive\n");
    await execd.json(`/command?id=${id}`, { method: "DELETE" });
    await settlesAt({ running: 0, requests: 0 });
  });
});
