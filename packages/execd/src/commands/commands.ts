import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { invalidField, missingProperty } from "@paddock/common/validation-messages";
import type { Environment } from "../environment.js";
import { sendJson } from "../http/answers.js";
import { optionalInteger, optionalString, optionalStringMap, queryOne, readObject } from "../http/request.js";
import { backpressure, drained, openSse } from "../streams/backpressure.js";
import { killedForMemory, memoryKills, outOfMemory } from "./memory-kills.js";
import { outputWriter, requestedFraming } from "./output-framing.js";
import { OutputLog } from "./output-log.js";
import { WarmShell } from "./warm-shell.js";

export const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

interface Command {
  id: string;
  content: string;
  child: ChildProcess;
  background: boolean;
  running: boolean;
  exitCode: number | null;
  error?: string;
  startedAt: string;
  finishedAt: string | null;
  log: OutputLog;
}

/** Finished commands kept for status queries; the oldest are forgotten beyond this. */
const keepFinished = 200;

/** Shell commands: each in its own process group, streamed over SSE, reattachable when in the background. */
export class Commands {
  private readonly commands = new Map<string, Command>();
  private readonly warm: WarmShell;

  constructor(private readonly env: Environment) {
    this.warm = new WarmShell(shell, env);
  }

  async run(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const framing = requestedFraming(req);
    const body = await readObject(req);
    const content = optionalString(body, "command");
    if (content === undefined)
      throw new PaddockError(Errors.invalidRequest, missingProperty("body", "command"));
    if (content === "")
      throw new PaddockError(Errors.invalidRequest, invalidField("body.command", "must not be empty"));
    const cwd = optionalString(body, "cwd");
    const timeout = optionalInteger(body, "timeout", 1);
    const uid = optionalInteger(body, "uid");
    const gid = optionalInteger(body, "gid");
    if (gid !== undefined && uid === undefined)
      throw new PaddockError(Errors.invalidRequest, invalidField("body.gid", "needs uid too"));
    const envs = optionalStringMap(body, "envs");
    const background = body.background === true;
    if (body.background !== undefined && typeof body.background !== "boolean")
      throw new PaddockError(Errors.invalidRequest, invalidField("body.background", "must be boolean"));
    if (cwd && !existsSync(cwd)) throw new PaddockError(Errors.invalidRequest, `cwd ${cwd} does not exist`);

    const directory = cwd ?? process.env.HOME ?? "/";
    // Read before the command starts: a rise by its end tells a kill for memory from other SIGKILLs.
    const killsBefore = memoryKills();
    // A cwd that is not a directory goes the spawn way, which refuses it before the stream opens.
    const warmFits = uid === undefined && (!cwd || statSync(cwd).isDirectory());
    const child =
      (warmFits ? this.warm.take(content, directory, envs) : undefined) ??
      spawn(shell, ["-c", content], {
        cwd: directory,
        env: this.env.forProcess(envs),
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        ...(uid !== undefined ? { uid } : {}),
        ...(gid !== undefined ? { gid } : {}),
      });
    // A command that goes on in the background leaves the next one a shell at once.
    if (background) setImmediate(() => this.warm.refill());
    const command: Command = {
      id: randomUUID(),
      content,
      child,
      background,
      running: true,
      exitCode: null,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      log: new OutputLog(),
    };
    this.remember(command);
    const started = Date.now();
    const sse = openSse(res);
    sse.send({ type: "init", text: command.id });

    let timer: NodeJS.Timeout | undefined;
    if (timeout) {
      timer = setTimeout(() => {
        command.error = `timed out after ${timeout} ms`;
        killGroup(child, "SIGKILL");
      }, timeout);
    }

    const writers = {
      stdout: outputWriter(framing, "command", (text) => sse.send({ type: "stdout", text })),
      stderr: outputWriter(framing, "command", (text) => sse.send({ type: "stderr", text })),
    };
    const flow = backpressure(
      () => drained(res),
      () => [child.stdout, child.stderr],
    );
    const forward = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      command.log.append(text);
      if (background) return;
      // A slow client pauses the command's output instead of growing execd's memory.
      if (!writers[stream].push(text)) flow.full();
    };
    child.stdout?.on("data", forward("stdout"));
    child.stderr?.on("data", forward("stderr"));

    if (background) {
      sse.end();
    } else {
      // A foreground client that goes away takes its command with it.
      res.on("close", () => {
        if (command.running) killGroup(child, "SIGKILL");
      });
    }

    child.on("error", (error) => {
      command.error = error.message;
      // A process that never started (EAGAIN at the process limit, say) emits no exit.
      if (child.pid === undefined) finish(127, null);
    });
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (!command.running) return;
      clearTimeout(timer);
      command.running = false;
      command.exitCode = code ?? (signal ? 128 + signalNumber(signal) : -1);
      if (!command.error && killedForMemory(command.exitCode, killsBefore)) command.error = outOfMemory;
      command.finishedAt = new Date().toISOString();
      command.log.finish();
      if (background) {
        this.warm.refill();
        return;
      }
      writers.stdout.end();
      writers.stderr.end();
      const execution_time = Date.now() - started;
      if (command.exitCode === 0 && !command.error) {
        sse.send({ type: "execution_complete", execution_time, exit_code: 0 });
      } else {
        sse.send({
          type: "error",
          exit_code: command.exitCode,
          execution_time,
          error: {
            ename: command.error?.startsWith("timed out")
              ? "CommandTimeout"
              : command.error === outOfMemory
                ? "OutOfMemory"
                : "CommandExecError",
            evalue: command.error ?? String(command.exitCode),
            traceback: [],
          },
        });
      }
      sse.end();
      // Started right after the answer went out (not later: a quick client's next request would
      // arrive first), so the next command finds a shell waiting.
      this.warm.refill();
    };
    // Output pipes can outlive the shell (a daemon it started keeps them open): finish on close,
    // or shortly after exit. The grace period ends in a check phase, after one more poll of the
    // pipes: on a busy loop the timer can come due before the poll that reads what the shell wrote
    // just before it exited, and finishing then would drop that output.
    child.on("close", finish);
    child.on("exit", (code, signal) =>
      setTimeout(() => setImmediate(() => finish(code, signal)), 200).unref(),
    );
  }

  interrupt(url: URL, res: ServerResponse): void {
    const id = queryOne(url, "id", true) as string;
    const command = this.find(id);
    if (command.running) {
      command.error = "interrupted";
      killGroup(command.child, "SIGTERM");
      setTimeout(() => {
        if (command.running) killGroup(command.child, "SIGKILL");
      }, 2000).unref();
    }
    sendJson(res, 200, { id, interrupted: command.running });
  }

  status(id: string, res: ServerResponse): void {
    const command = this.find(id);
    sendJson(res, 200, {
      id: command.id,
      content: command.content,
      running: command.running,
      exit_code: command.exitCode,
      ...(command.error ? { error: command.error } : {}),
      started_at: command.startedAt,
      finished_at: command.finishedAt,
    });
  }

  logs(id: string, url: URL, res: ServerResponse): void {
    const command = this.find(id);
    const raw = queryOne(url, "cursor");
    const cursor = raw === undefined ? undefined : Number(raw);
    if (cursor !== undefined && (!Number.isInteger(cursor) || cursor < 0))
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField("query.cursor", "must be a non-negative integer"),
      );
    const { text, next } = command.log.read(cursor);
    res.writeHead(200, {
      "content-type": "text/plain; charset=utf-8",
      "EXECD-COMMANDS-TAIL-CURSOR": String(next),
      "EXECD-COMMANDS-RUNNING": String(command.running),
    });
    res.end(text);
  }

  /** Kills every command still running (execd shutting down). */
  killAll(): void {
    this.warm.close();
    for (const command of this.commands.values()) if (command.running) killGroup(command.child, "SIGKILL");
  }

  private find(id: string): Command {
    const command = this.commands.get(id);
    if (!command) throw new PaddockError(ExecdErrors.commandNotFound, `no command ${id}`);
    return command;
  }

  private remember(command: Command): void {
    this.commands.set(command.id, command);
    if (this.commands.size <= keepFinished) return;
    for (const [id, old] of this.commands) {
      if (!old.running) {
        this.commands.delete(id);
        if (this.commands.size <= keepFinished) break;
      }
    }
  }
}

export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const group = child.pid;
  if (group === undefined) return;
  try {
    process.kill(-group, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
    return;
  }
  // gVisor does not hold back a fork in flight when its group is killed, so a child forked at
  // that moment (a warm shell starting its command, say) can outlive the signal. Signal the group
  // again shortly after: its id stays reserved while any member lives, so nothing else is hit.
  if (signal === "SIGKILL") {
    for (const delay of [50, 500]) {
      setTimeout(() => {
        try {
          process.kill(-group, signal);
        } catch {
          // The group is empty.
        }
      }, delay).unref();
    }
  }
}

export function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGKILL: 9,
    SIGTERM: 15,
    SIGPIPE: 13,
  };
  return numbers[signal] ?? 0;
}
