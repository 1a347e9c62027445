import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { defaultDirectory, type Environment } from "../environment.js";
import { backpressure } from "../streams/backpressure.js";
import type { EventStream } from "../streams/event-sink.js";
import { killedForMemory, memoryKills, outOfMemory } from "./memory-kills.js";
import { OutputEvents } from "./output-events.js";
import { type OutputFraming, outputWriter } from "./output-framing.js";
import { OutputLog } from "./output-log.js";
import { killGroup, shell, signalNumber } from "./process-group.js";
import { WarmShell } from "./warm-shell.js";

/** A command to run, as `POST /command` asks for it (checked by the HTTP layer). */
export interface CommandRequest {
  command: string;
  cwd?: string;
  /** Milliseconds before the command is killed. */
  timeout?: number;
  uid?: number;
  gid?: number;
  envs?: Record<string, string>;
  /** Answered with its id at once; its output only kept for `logs`. */
  background: boolean;
  framing: OutputFraming;
}

/** `GET /command/status/{id}`. */
export interface CommandStatus {
  id: string;
  content: string;
  running: boolean;
  exit_code: number | null;
  error?: string;
  started_at: string;
  finished_at: string | null;
}

/** A command execd has run, running or finished. */
export interface Command {
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

/**
 * Finished commands kept for status and log queries: the oldest are forgotten beyond this many,
 * or while the logs of all kept commands hold more than this much memory (each log is bounded
 * on its own, 200 full ones would not be).
 */
const keepFinished = 200;
const keepLogBytes = 64 * 2 ** 20;

/** Shell commands: each in its own process group, streamed over SSE, reattachable when in the background. */
export class Commands {
  private readonly commands = new Map<string, Command>();
  private readonly warm: WarmShell;

  constructor(private readonly env: Environment) {
    this.warm = new WarmShell(shell, env);
  }

  /**
   * Starts a command and streams it: `init` with its id, its output, then `execution_complete`
   * or `error`. A foreground command ends with its client; a background one outlives the stream.
   */
  run(request: CommandRequest, stream: EventStream): void {
    const { command: content, cwd, timeout, uid, gid, envs, background, framing } = request;
    if (cwd && !existsSync(cwd)) throw new PaddockError(Errors.invalidRequest, `cwd ${cwd} does not exist`);

    const directory = cwd ?? defaultDirectory();
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
    const sse = stream.open();
    sse.send({ type: "init", text: command.id });

    let timer: NodeJS.Timeout | undefined;
    if (timeout) {
      timer = setTimeout(() => {
        command.error = `timed out after ${timeout} ms`;
        killGroup(child, "SIGKILL");
      }, timeout);
    }

    // A pipe read's events are built as bytes and go out in one write: a read of short lines is
    // thousands of events, a long line's 1 MiB piece is best never made a string.
    const events = new OutputEvents();
    let now = 0;
    const sendEvents = (): boolean => {
      const bytes = events.take();
      return bytes ? sse.sendEncoded(bytes) : true;
    };
    const writers = {
      stdout: outputWriter(framing, "command", (bytes, start, end) => {
        events.add("stdout", bytes, start, end, now);
        return true;
      }),
      stderr: outputWriter(framing, "command", (bytes, start, end) => {
        events.add("stderr", bytes, start, end, now);
        return true;
      }),
    };
    const flow = backpressure(
      () => sse.drained(),
      () => [child.stdout, child.stderr],
    );
    const forward = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      command.log.append(chunk);
      if (background) return;
      // A slow client pauses the command's output instead of growing execd's memory.
      now = Date.now();
      writers[stream].push(chunk);
      if (!sendEvents()) flow.full();
    };
    child.stdout?.on("data", forward("stdout"));
    child.stderr?.on("data", forward("stderr"));

    if (background) {
      sse.end();
    } else {
      // A foreground client that goes away takes its command with it.
      stream.closed.addEventListener("abort", () => {
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
      now = Date.now();
      writers.stdout.end();
      writers.stderr.end();
      sendEvents();
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

  /** Interrupts a running command (SIGTERM, then SIGKILL); reports whether it was running. */
  interrupt(id: string): { id: string; interrupted: boolean } {
    const command = this.find(id);
    if (command.running) {
      command.error = "interrupted";
      killGroup(command.child, "SIGTERM");
      setTimeout(() => {
        if (command.running) killGroup(command.child, "SIGKILL");
      }, 2000).unref();
    }
    return { id, interrupted: command.running };
  }

  status(id: string): CommandStatus {
    const command = this.find(id);
    return {
      id: command.id,
      content: command.content,
      running: command.running,
      exit_code: command.exitCode,
      ...(command.error ? { error: command.error } : {}),
      started_at: command.startedAt,
      finished_at: command.finishedAt,
    };
  }

  /** The command's output from `cursor` on (all of it without one), and the cursor to read on from. */
  logs(command: Command, cursor: number | undefined): { text: string; next: number; running: boolean } {
    const { text, next } = command.log.read(cursor);
    return { text, next, running: command.running };
  }

  /** How many commands are running now, in the foreground or the background (finished ones kept for their logs are not). */
  runningCount(): number {
    let running = 0;
    for (const command of this.commands.values()) if (command.running) running++;
    return running;
  }

  /** Kills every command still running (execd shutting down). */
  killAll(): void {
    this.warm.close();
    for (const command of this.commands.values()) if (command.running) killGroup(command.child, "SIGKILL");
  }

  /** A command by id, or 404. */
  find(id: string): Command {
    const command = this.commands.get(id);
    if (!command) throw new PaddockError(ExecdErrors.commandNotFound, `no command ${id}`);
    return command;
  }

  private remember(command: Command): void {
    this.commands.set(command.id, command);
    let logBytes = 0;
    for (const kept of this.commands.values()) logBytes += kept.log.footprint();
    for (const [id, old] of this.commands) {
      if (this.commands.size <= keepFinished && logBytes <= keepLogBytes) break;
      if (old.running) continue;
      this.commands.delete(id);
      logBytes -= old.log.footprint();
    }
  }
}
