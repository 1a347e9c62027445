import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import type { Writable } from "node:stream";
import { killGroup } from "../commands/process-group.js";
import { ptyHelper } from "../terminals/terminals.js";
import { ConnectError, toConnectError } from "./connect.js";
import { EventFeed, type Watcher } from "./process-feed.js";
import {
  dataEvent,
  endEvent,
  endOf,
  type Input,
  type ProcessConfig,
  type PtySize,
  type SignalName,
  type StartRequest,
} from "./process-messages.js";

/** Everything needed to start a process, its user and environment already resolved. */
export interface Launch {
  request: StartRequest;
  cwd: string;
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  /** A warm shell already running the request's command (in its own group, no stdin). */
  warm?: ChildProcess;
}

/** How long after its exit a process whose output pipes stay open (a daemon it left) is ended. */
const exitGrace = 200;

const notATerminal = (pid: number) =>
  new ConnectError("failed_precondition", `process ${pid} was not started with a pty`);

/**
 * One process started through envd's Start: a plain child in its own process group with piped
 * output, or a program on a pseudo-terminal through execd's paddock-pty helper (whose pid is
 * the one reported). Its events go to an `EventFeed`; it leaves the registry when it ends.
 */
export class RunningProcess {
  readonly feed: EventFeed;
  private readonly child: ChildProcess;
  private readonly terminal: { control: Writable } | undefined;
  private stdinOpen: boolean;
  private paused = false;
  private finished = false;
  /** What a client asked for with SendSignal (or the deadline), to word a terminal's end. */
  private requested: SignalName | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private readonly ended: Promise<void>;
  private markEnded!: () => void;

  private constructor(
    readonly pid: number,
    child: ChildProcess,
    readonly config: ProcessConfig,
    readonly tag: string | undefined,
    pty: boolean,
    stdin: boolean,
    private readonly onEnd: (ended: RunningProcess) => void,
  ) {
    this.child = child;
    this.terminal = pty ? { control: child.stdio[3] as Writable } : undefined;
    this.stdinOpen = pty || stdin;
    this.ended = new Promise((resolve) => {
      this.markEnded = resolve;
    });
    const outputs = [child.stdout, child.stderr];
    this.feed = new EventFeed({
      pause: () => {
        this.paused = true;
        for (const output of outputs) output?.pause();
      },
      resume: () => {
        this.paused = false;
        for (const output of outputs) output?.resume();
      },
    });
  }

  /**
   * Starts the process and returns it with its first watcher (taken before any output can
   * arrive, so its Start stream misses nothing). A program that cannot be started is refused
   * with the reason, before any event.
   */
  static async start(
    launch: Launch,
    onEnd: (ended: RunningProcess) => void,
  ): Promise<{ running: RunningProcess; watcher: Watcher }> {
    const { request } = launch;
    const { cmd, args } = request.process;
    const options = {
      cwd: launch.cwd,
      env: launch.env,
      ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.gid } : {}),
    };
    const child = launch.warm
      ? launch.warm
      : request.pty
        ? spawn(ptyHelper, [String(request.pty.rows), String(request.pty.cols), cmd, ...args], {
            ...options,
            stdio: ["pipe", "pipe", "pipe", "pipe"],
          })
        : // Its own process group, so a signal reaches whatever the command started too.
          spawn(cmd, args, {
            ...options,
            detached: true,
            stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"],
          });
    if (child.pid === undefined) {
      const [error] = (await once(child, "error")) as [NodeJS.ErrnoException];
      const failure = toConnectError(error);
      throw new ConnectError(failure.code, `cannot start ${cmd}: ${error.message}`);
    }
    const running = new RunningProcess(
      child.pid,
      child,
      request.process,
      request.tag,
      request.pty !== undefined,
      request.stdin,
      onEnd,
    );
    const watcher = running.feed.watch();
    running.listen();
    return { running, watcher };
  }

  private listen(): void {
    const { child } = this;
    // Writes racing the process's exit fail with EPIPE; the end is reported by the exit.
    for (const stream of [child.stdin, this.terminal?.control]) stream?.on("error", () => {});
    const forward = (stream: "stdout" | "stderr") => (chunk: Buffer) =>
      this.feed.publish(dataEvent(this.terminal ? "pty" : stream, chunk), chunk.length);
    child.stdout?.on("data", forward("stdout"));
    child.stderr?.on("data", forward("stderr"));
    child.on("error", () => {});
    // Output pipes can outlive the process (a daemon it started keeps them open): end on close,
    // or shortly after the exit once the output left in the pipes has been read.
    child.on("close", (code, signal) => this.finish(code, signal));
    child.on("exit", (code, signal) => this.finishAfterGrace(code, signal));
  }

  private finishAfterGrace(code: number | null, signal: NodeJS.Signals | null): void {
    // Ends in a check phase after one more poll, so output written just before the exit is read.
    setTimeout(() => {
      setImmediate(() => {
        // A slow client holds the output back: wait until it has caught up.
        if (this.paused) this.finishAfterGrace(code, signal);
        else this.finish(code, signal);
      });
    }, exitGrace).unref();
  }

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.deadline);
    // paddock-pty answers a hang-up with 128 + the signal that ended the program: word it as
    // the kill it was, as envd does for a terminal it kills.
    const killedTerminal = this.terminal && this.requested && (code === null || code >= 128);
    this.feed.end(endEvent(killedTerminal ? endOf(null, this.requested ?? null) : endOf(code, signal)));
    this.onEnd(this);
    this.markEnded();
  }

  /** Sends a signal: to the process group, or, for a terminal, a hang-up (SIGHUP, then SIGKILL). */
  signal(name: SignalName): void {
    if (this.finished) return;
    this.requested = name;
    if (this.terminal) this.child.kill("SIGHUP");
    else killGroup(this.child, name);
  }

  /** Resolves when the process has ended, or after `ms` when it has not. */
  async settled(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.ended, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  /** Kills the process when its Start call's deadline passes. */
  killAfter(ms: number): void {
    this.deadline = setTimeout(() => this.signal("SIGKILL"), ms);
    this.deadline.unref();
  }

  async write(input: Input): Promise<void> {
    if ("pty" in input && !this.terminal) throw notATerminal(this.pid);
    const stream = this.child.stdin;
    if (!stream || !this.stdinOpen) {
      throw new ConnectError(
        "failed_precondition",
        this.child.stdin
          ? `the stdin of process ${this.pid} is closed`
          : `process ${this.pid} was started without stdin (start it with stdin: true)`,
      );
    }
    const bytes = "pty" in input ? input.pty : input.stdin;
    // Resolves once the bytes are in the pipe: a process that does not read holds the call.
    await new Promise<void>((resolve, reject) =>
      stream.write(bytes, (error) =>
        error
          ? reject(new ConnectError("failed_precondition", `process ${this.pid} no longer reads its input`))
          : resolve(),
      ),
    );
  }

  /** Closes stdin (EOF). A terminal has none to close: Ctrl-D (0x04) as input ends its input. */
  closeStdin(): void {
    if (this.terminal)
      throw new ConnectError(
        "failed_precondition",
        `process ${this.pid} runs on a pty: send Ctrl-D (0x04) as input instead`,
      );
    if (!this.child.stdin)
      throw new ConnectError(
        "failed_precondition",
        `process ${this.pid} was started without stdin (start it with stdin: true)`,
      );
    this.stdinOpen = false;
    this.child.stdin.end();
  }

  resize(size: PtySize): void {
    if (!this.terminal) throw notATerminal(this.pid);
    this.terminal.control.write(`${size.rows} ${size.cols}\n`);
  }
}
