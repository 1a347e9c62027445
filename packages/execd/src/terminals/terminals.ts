import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Writable } from "node:stream";
import { EXECD_MOUNT } from "@paddock/common/contracts";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { invalidField, missingProperty } from "@paddock/common/validation-messages";
import { shell, signalNumber } from "../commands/commands.js";
import type { Environment } from "../environment.js";
import { sendJson } from "../http/answers.js";
import { optionalInteger, optionalString, optionalStringMap, readObject } from "../http/request.js";
import { drained, openSse } from "../streams/backpressure.js";

/** The static helper that opens the pseudo-terminal (native/paddock-pty.c). */
export const ptyHelper = process.env.PADDOCK_EXECD_PTY ?? `${EXECD_MOUNT}/bin/paddock-pty`;
/** Input one request may carry: a paste, not a file transfer. */
const inputLimit = 1024 * 1024;

interface Terminal {
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

  async start(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readObject(req);
    const command = optionalString(body, "command");
    const cwd = optionalString(body, "cwd") ?? process.env.HOME ?? "/";
    const rows = optionalInteger(body, "rows", 1) ?? 24;
    const cols = optionalInteger(body, "cols", 1) ?? 80;
    if (rows > 10_000 || cols > 10_000)
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(rows > 10_000 ? "body.rows" : "body.cols", "must be <= 10000"),
      );
    const uid = optionalInteger(body, "uid");
    const gid = optionalInteger(body, "gid");
    if (gid !== undefined && uid === undefined)
      throw new PaddockError(Errors.invalidRequest, invalidField("body.gid", "needs uid too"));
    const envs = optionalStringMap(body, "envs");
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

    const sse = openSse(res);
    sse.send({ type: "init", text: id, pid: helper.pid });
    const forward = (chunk: Buffer) => {
      // Backpressure: a slow client pauses the terminal rather than growing execd's memory.
      if (!sse.send({ type: "output", data: chunk.toString("base64") })) {
        helper.stdout?.pause();
        res.once("drain", () => helper.stdout?.resume());
      }
    };
    helper.stdout?.on("data", forward);
    helper.stderr?.on("data", forward);
    res.on("close", () => {
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

  async input(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const terminal = this.find(id);
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > inputLimit)
        throw new PaddockError(Errors.payloadTooLarge, "input is limited to 1 MiB per request");
      const stdin = terminal.helper.stdin;
      // A program that does not read its terminal holds the input back here, not in memory.
      if (stdin && !stdin.write(chunk)) await drained(stdin);
    }
    sendJson(res, 200, {});
  }

  async resize(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const terminal = this.find(id);
    const body = await readObject(req);
    const rows = optionalInteger(body, "rows", 1);
    const cols = optionalInteger(body, "cols", 1);
    if (rows === undefined || cols === undefined)
      throw new PaddockError(
        Errors.invalidRequest,
        missingProperty("body", rows === undefined ? "rows" : "cols"),
      );
    if (rows > 10_000 || cols > 10_000)
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(rows > 10_000 ? "body.rows" : "body.cols", "must be <= 10000"),
      );
    terminal.resize(rows, cols);
    sendJson(res, 200, {});
  }

  /** Hangs the terminal up: its programs get SIGHUP, then SIGKILL; the stream reports the exit. */
  close(id: string, res: ServerResponse): void {
    this.find(id).helper.kill("SIGHUP");
    sendJson(res, 200, {});
  }

  closeAll(): void {
    for (const terminal of this.terminals.values()) terminal.helper.kill("SIGHUP");
  }

  private find(id: string): Terminal {
    const terminal = this.terminals.get(id);
    if (!terminal) throw terminalNotFound(id);
    return terminal;
  }
}
