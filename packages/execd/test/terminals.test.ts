import { type SseEvent, SseParser } from "@paddock/common";
import { describe, expect, test } from "vitest";
import { countProcesses, type ExecdClient, sandboxPerSuite } from "./client.js";

/** A terminal's stream as the client sees it: its id, the output so far, and how it ended. */
class TerminalStream {
  output = "";
  exit: SseEvent | undefined;
  id = "";
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly execd: ExecdClient,
    readonly controller: AbortController,
  ) {}

  static async open(execd: ExecdClient, body: Record<string, unknown>): Promise<TerminalStream> {
    const controller = new AbortController();
    const response = await execd.fetch("/pty", {
      method: "POST",
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(`/pty answered ${response.status}: ${await response.text()}`);
    const terminal = new TerminalStream(execd, controller);
    terminal.pump(response).catch(() => {});
    await terminal.until(() => terminal.id !== "");
    return terminal;
  }

  private async pump(response: Response): Promise<void> {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
        if (event.type === "init") this.id = String(event.text);
        if (event.type === "output") this.output += Buffer.from(String(event.data), "base64").toString();
        if (event.type === "exit") this.exit = event;
      }
      for (const wake of this.waiters.splice(0)) wake();
    }
  }

  /** Resolves once `condition` holds, checked after every chunk; fails after 10 s. */
  async until(condition: () => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out; output so far: ${JSON.stringify(this.output)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  async type(text: string): Promise<void> {
    const response = await this.execd.fetch(`/pty/${this.id}/input`, { method: "POST", body: text });
    expect(response.status).toBe(200);
  }
}

describe.each(["gvisor", "runc"] as const)("execd terminals under %s", (secure) => {
  let execd: ExecdClient;
  sandboxPerSuite(secure, { image: { uri: "paddock/template-python:latest" } }, (made) => {
    execd = made;
  });

  test("a login shell on a real terminal: size, resize, input, and its exit code", async () => {
    const terminal = await TerminalStream.open(execd, { rows: 30, cols: 100 });
    await terminal.type("tty; echo TERM=$TERM; stty size\n");
    await terminal.until(() => terminal.output.includes("30 100"));
    expect(terminal.output).toMatch(/\/dev\/pts\/\d+/);
    expect(terminal.output).toContain("TERM=xterm-256color");

    const resized = await execd.fetch(`/pty/${terminal.id}/resize`, {
      method: "POST",
      body: JSON.stringify({ rows: 40, cols: 120 }),
    });
    expect(resized.status).toBe(200);
    await terminal.type("stty size\n");
    await terminal.until(() => terminal.output.includes("40 120"));

    await terminal.type("exit 7\n");
    await terminal.until(() => terminal.exit !== undefined);
    expect(terminal.exit).toMatchObject({ type: "exit", exit_code: 7 });
    expect((await execd.fetch(`/pty/${terminal.id}/input`, { method: "POST", body: "x" })).status).toBe(404);
  });

  test("a given command runs on the terminal; Ctrl-C reaches it as a terminal's interrupt", async () => {
    const terminal = await TerminalStream.open(execd, {
      command: "trap 'echo got-INT; exit 3' INT; echo ready; while :; do sleep 0.1; done",
    });
    await terminal.until(() => terminal.output.includes("ready"));
    await terminal.type("\x03");
    await terminal.until(() => terminal.exit !== undefined);
    expect(terminal.output).toContain("got-INT");
    expect(terminal.exit).toMatchObject({ exit_code: 3 });
  });

  test("DELETE hangs a terminal up, and a client that goes away takes its programs with it", async () => {
    const hungUp = await TerminalStream.open(execd, { command: "echo up; sleep 1000" });
    await hungUp.until(() => hungUp.output.includes("up"));
    expect((await execd.fetch(`/pty/${hungUp.id}`, { method: "DELETE" })).status).toBe(200);
    await hungUp.until(() => hungUp.exit !== undefined);
    expect(Number(hungUp.exit?.exit_code)).toBeGreaterThan(128);

    const abandoned = await TerminalStream.open(execd, { command: "echo up; sleep 1001" });
    await abandoned.until(() => abandoned.output.includes("up"));
    // The helper and the sleep it runs.
    expect((await execd.run(countProcesses("sleep 1001"))).stdout).toBe("2\n");
    abandoned.controller.abort();
    await expect
      .poll(async () => (await execd.run(countProcesses("sleep 1001"))).stdout, { timeout: 10_000 })
      .toBe("0\n");
  });

  test("bad requests: unknown ids, sizes out of range, a cwd that is not a directory", async () => {
    const unknown = await execd.fetch("/pty/nope/resize", { method: "POST", body: '{"rows":1,"cols":1}' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: "terminal_not_found" });
    for (const body of [{ rows: 0 }, { cols: 10_001 }, { rows: "x" }, { cwd: "/etc/hostname" }]) {
      const response = await execd.fetch("/pty", { method: "POST", body: JSON.stringify(body) });
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
  });
});
