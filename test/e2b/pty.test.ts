/**
 * `sandbox.pty` of E2B's stock `e2b` SDK, from the npm registry and unmodified, against a live
 * Paddock server (real Docker, gVisor): interactive shells on a pseudo-terminal, served by
 * execd's envd `process.Process` service through the E2B gateway.
 */
import { CommandExitError, type CommandHandle, NotFoundError, Sandbox, TimeoutError } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

const encoder = new TextEncoder();

/** A terminal's output as text, and a way to wait for something to show in it. */
class Screen {
  text = "";
  private readonly decoder = new TextDecoder();
  readonly onData = (data: Uint8Array) => {
    this.text += this.decoder.decode(data, { stream: true });
  };

  /** Resolves once the output (from `from` on) matches; fails after 20 s showing the output. */
  async until(pattern: RegExp, from = 0): Promise<RegExpMatchArray> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = this.text.slice(from).match(pattern);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`${pattern} never showed; output: ${JSON.stringify(this.text)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe("the stock e2b SDK: sandbox.pty", () => {
  let server: E2bServer;
  let sandbox: Sandbox;
  const type = (pid: number, text: string) => sandbox.pty.sendInput(pid, encoder.encode(text));
  const pids = async () => (await sandbox.commands.list()).map((process) => process.pid);

  beforeAll(async () => {
    server = await startE2bServer();
    Object.assign(process.env, server.env);
    sandbox = await Sandbox.create("base", { timeoutMs: 600_000 });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("create: a login shell on a real terminal of the asked size, with the SDK's TERM and locale", async () => {
    const screen = new Screen();
    const terminal = await sandbox.pty.create({ cols: 100, rows: 30, onData: screen.onData });
    expect(terminal.pid).toBeGreaterThan(0);
    await type(terminal.pid, 'tty; stty size; echo "$TERM $LANG"; pwd; id -un\n');
    await screen.until(/30 100\r\n/);
    await screen.until(/xterm-256color C\.UTF-8\r\n\/home\/user\r\nuser\r\n/);
    expect(screen.text).toMatch(/\/dev\/pts\/\d+/);

    // Listed among the processes as what the SDK started: bash -i -l.
    const listed = (await sandbox.commands.list()).find((process) => process.pid === terminal.pid);
    expect(listed).toMatchObject({ cmd: "/bin/bash", args: ["-i", "-l"] });

    await type(terminal.pid, "exit\n");
    expect(await terminal.wait()).toMatchObject({ exitCode: 0 });
    expect(await pids()).not.toContain(terminal.pid);
  });

  test("resize: the program sees the new size (stty size)", async () => {
    const screen = new Screen();
    const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: screen.onData });
    await type(terminal.pid, "stty size\n");
    await screen.until(/24 80\r\n/);
    const mark = screen.text.length;
    await sandbox.pty.resize(terminal.pid, { cols: 132, rows: 50 });
    await type(terminal.pid, "stty size\n");
    await screen.until(/50 132\r\n/, mark);
    await sandbox.pty.kill(terminal.pid);
  });

  test("input: Ctrl-C interrupts the running program, and an exit code comes back through wait()", async () => {
    const screen = new Screen();
    const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: screen.onData });
    await type(terminal.pid, "sleep 300\n");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await type(terminal.pid, "\x03");
    await type(terminal.pid, "echo after-sleep=$?\n");
    await screen.until(/after-sleep=130/);
    await type(terminal.pid, "exit 3\n");
    const ended = await terminal.wait().catch((error) => error);
    expect(ended).toBeInstanceOf(CommandExitError);
    expect(ended).toMatchObject({ exitCode: 3 });
  });

  test("envs, cwd and user", async () => {
    const screen = new Screen();
    const terminal = await sandbox.pty.create({
      cols: 80,
      rows: 24,
      onData: screen.onData,
      envs: { PTY_VAR: "pty-value" },
      cwd: "/tmp",
      user: "nobody",
    });
    await type(terminal.pid, 'echo "[$PTY_VAR]"; pwd; id -un; exit\n');
    await screen.until(/\[pty-value\]\r\n\/tmp\r\nnobody\r\n/);
    expect((await terminal.wait()).exitCode).toBe(0);
  });

  test("kill: the terminal and its programs end, it is gone from list(), a second kill is false", async () => {
    const screen = new Screen();
    const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: screen.onData });
    await type(terminal.pid, "sleep 302\n");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await sandbox.pty.kill(terminal.pid)).toBe(true);
    expect(await pids()).not.toContain(terminal.pid);
    const ended = await terminal.wait().catch((error) => error);
    expect(ended).toBeInstanceOf(CommandExitError);
    expect(ended).toMatchObject({ exitCode: -1, error: "signal: killed" });
    expect(await sandbox.pty.kill(terminal.pid)).toBe(false);
    const survivors = await sandbox.commands.run(
      "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done 2>/dev/null | grep -c '^sleep 302' || true",
    );
    expect(survivors.stdout).toBe("0\n");
  });

  test("connect: after a disconnect the shell lives on, and a new handle sees its output from then on", async () => {
    const first = new Screen();
    const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: first.onData, timeoutMs: 0 });
    await type(terminal.pid, "echo before-disconnect\n");
    await first.until(/before-disconnect\r\n/);
    await terminal.disconnect();
    await type(terminal.pid, "echo while-away\n");
    await new Promise((resolve) => setTimeout(resolve, 500));

    const second = new Screen();
    const connected: CommandHandle = await sandbox.pty.connect(terminal.pid, { onData: second.onData });
    expect(connected.pid).toBe(terminal.pid);
    await type(terminal.pid, "echo after-connect\n");
    await second.until(/after-connect\r\n/);
    expect(second.text).not.toContain("while-away");
    expect(first.text).not.toContain("while-away");
    await type(terminal.pid, "exit\n");
    expect((await connected.wait()).exitCode).toBe(0);
  });

  test("timeoutMs: the terminal is ended when its deadline passes", async () => {
    const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: () => {}, timeoutMs: 1500 });
    expect(await pids()).toContain(terminal.pid);
    await expect(terminal.wait()).rejects.toBeInstanceOf(TimeoutError);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await pids()).not.toContain(terminal.pid);
  });

  test("unknown pids: input, resize and connect raise NotFoundError, kill answers false", async () => {
    const unknown = 4_000_000;
    await expect(type(unknown, "x")).rejects.toBeInstanceOf(NotFoundError);
    await expect(sandbox.pty.resize(unknown, { cols: 80, rows: 24 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(sandbox.pty.connect(unknown, { onData: () => {} })).rejects.toBeInstanceOf(NotFoundError);
    expect(await sandbox.pty.kill(unknown)).toBe(false);
  });
});
