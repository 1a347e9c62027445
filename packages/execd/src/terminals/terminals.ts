import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import type { Writable } from "node:stream";
import { EXECD_MOUNT } from "@paddock/common/contracts";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { shell, signalNumber } from "../commands/process-group.js";
import { defaultDirectory, type Environment } from "../environment.js";
import { drained } from "../streams/backpressure.js";
import type { EventStream } from "../streams/event-sink.js";

/** The static helper that opens the pseudo-terminal (native/paddock-pty.c). */
export const ptyHelper = process.env.PADDOCK_EXECD_PTY ?? `${EXECD_MOUNT}/bin/paddock-pty`;
/** Input one request may carry: a paste, not a file transfer. */
const inputLimit = 1024 * 1024;

/** A terminal to start, as `POST /pty` asks for it (checked by the HTTP layer). */
export interface TerminalRequest {
  /** Run with `bash -c`; a login shell without one. */
  command?: string;
  cwd?: string;
  rows: number;
  cols: number;
  uid?: number;
  gid?: number;
  envs?: Record<string, string>;
}

/** A program on a pseudo-terminal. */
export interface Terminal {
  helper: ChildProcess;
  resize(rows: number, cols: number): void;
}

const terminalNotFound = (id: string) => new PaddockError(ExecdErrors.terminalNotFound, `no terminal ${id}`);

/**
 * `/pty`: interactive programs on a pseudo-terminal (a Paddock extension). `POST /pty` starts
 * one and streams it as SSE (`init` with the id, `output` with base64 bytes, `exit`); input,
 * resizes and hang-ups go to `/pty/{id}/…`. The terminal lives as long as its stream: a client
 * that goes away hangs it up.
 */
export class Terminals {
  private readonly terminals = new Map<string, Terminal>();

  constructor(private readonly env: Environment) {}

  /** Starts a program on a new terminal and streams it until it exits or the client leaves. */
  start(request: TerminalRequest, stream: EventStream): void {
    const { command, rows, cols, uid, gid, envs } = request;
    const cwd = request.cwd ?? defaultDirectory();
    if (!existsSync(cwd) || !statSync(cwd).isDirectory())
      throw new PaddockError(Errors.invalidRequest, `cwd ${cwd} is not a directory`);

    // A login shell by default, so the image's profile sets the prompt and PATH as a user expects.
    const program = command ? [shell, "-c", command] : [shell, "-l"];
    const helper = spawn(ptyHelper, [String(rows), String(cols), ...program], {
      cwd,
      env: { TERM: "xterm-256color", ...this.env.forProcess(envs) },
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      ...(uid !== undefined ? { uid } : {}),
      ...(gid !== undefined ? { gid } : {}),
    });
    const id = randomUUID();
    const control = helper.stdio[3] as Writable;
    // Writes to a helper that has just exited fail with EPIPE; its exit is reported on the stream.
    for (const stream of [helper.stdin, control]) stream?.on("error", () => {});
    this.terminals.set(id, {
      helper,
      resize: (newRows, newCols) => control.write(`${newRows} ${newCols}\n`),
    });

    const sse = stream.open();
    sse.send({ type: "init", text: id, pid: helper.pid });
    const forward = (chunk: Buffer) => {
      // Backpressure: a slow client pauses the terminal rather than growing execd's memory.
      if (!sse.send({ type: "output", data: chunk.toString("base64") })) {
        helper.stdout?.pause();
        void sse.drained().then(() => helper.stdout?.resume());
      }
    };
    helper.stdout?.on("data", forward);
    helper.stderr?.on("data", forward);
    stream.closed.addEventListener("abort", () => {
      if (this.terminals.has(id)) helper.kill("SIGHUP");
    });
    helper.on("error", (error) => {
      this.terminals.delete(id);
      sse.send({ type: "error", error: { ename: "TerminalError", evalue: error.message, traceback: [] } });
      sse.end();
    });
    helper.on("close", (code, signal) => {
      this.terminals.delete(id);
      sse.send({ type: "exit", exit_code: code ?? 128 + (signal ? signalNumber(signal) : 0) });
      sse.end();
    });
  }

  /** Writes a request's bytes to the terminal (found with `find`), at the pace its program reads. */
  async input(terminal: Terminal, input: AsyncIterable<Buffer>): Promise<void> {
    let size = 0;
    for await (const chunk of input) {
      size += chunk.length;
      if (size > inputLimit)
        throw new PaddockError(Errors.payloadTooLarge, "input is limited to 1 MiB per request");
      const stdin = terminal.helper.stdin;
      // A program that does not read its terminal holds the input back here, not in memory.
      if (stdin && !stdin.write(chunk)) await drained(stdin);
    }
  }

  resize(terminal: Terminal, rows: number, cols: number): void {
    terminal.resize(rows, cols);
  }

  /** Hangs the terminal up: its programs get SIGHUP, then SIGKILL; the stream reports the exit. */
  close(id: string): void {
    this.find(id).helper.kill("SIGHUP");
  }

  /** How many terminals are open: each runs its program until it exits or is hung up. */
  openCount(): number {
    return this.terminals.size;
  }

  closeAll(): void {
    for (const terminal of this.terminals.values()) terminal.helper.kill("SIGHUP");
  }

  /** A terminal by id, or 404. */
  find(id: string): Terminal {
    const terminal = this.terminals.get(id);
    if (!terminal) throw terminalNotFound(id);
    return terminal;
  }
}
