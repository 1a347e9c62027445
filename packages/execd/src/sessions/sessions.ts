import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import type { SseEvent } from "@paddock/common/sse";
import { MarkerSplitter } from "../commands/marker-splitter.js";
import { type OutputFraming, outputWriter } from "../commands/output-framing.js";
import { killGroup } from "../commands/process-group.js";
import { defaultDirectory, type Environment } from "../environment.js";
import { backpressure } from "../streams/backpressure.js";
import type { EventStream } from "../streams/event-sink.js";

/** A run in a session, as `POST /session/{id}/run` asks for it (checked by the HTTP layer). */
export interface SessionRun {
  command: string;
  framing: OutputFraming;
  /** Where this run starts; the session's directory is back as it was after it. */
  cwd?: string;
  /** Milliseconds before the session is ended. */
  timeout?: number;
}

/** A bash session. */
export interface Session {
  id: string;
  bash: ChildProcess;
  dir: string;
  busy: boolean;
  runs: number;
}

/**
 * Bash sessions: one long-lived bash per session. Each run is written to a file and `source`d,
 * so the working directory, exported variables and functions carry over to the next run; a
 * marker printed after it (with the exit status) ends the run's output on both streams.
 */
export class Sessions {
  private readonly sessions = new Map<string, Session>();

  /**
   * @param shellPrefix the command that starts each bash, as an isolated session's agent wraps
   * it (a PID namespace of the shell's own); none elsewhere.
   */
  constructor(
    private readonly env: Environment,
    private readonly shellPrefix: string[] = [],
  ) {}

  /** Starts a bash session and returns its id. */
  async open(cwd: string | undefined): Promise<string> {
    if (cwd && !existsSync(cwd)) throw new PaddockError(Errors.invalidRequest, `cwd ${cwd} does not exist`);
    if (!existsSync("/bin/bash"))
      throw new PaddockError(ExecdErrors.bashUnavailable, "this image has no /bin/bash");
    const [file = "/bin/bash", ...args] = [...this.shellPrefix, "/bin/bash", "--noprofile", "--norc"];
    const bash = spawn(file, args, {
      cwd: cwd ?? defaultDirectory(),
      env: this.env.forProcess(),
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      await once(bash, "spawn");
    } catch (error) {
      throw new PaddockError(
        ExecdErrors.cannotStartProcess,
        `cannot start bash: ${(error as Error).message}`,
      );
    }
    const session: Session = {
      id: randomUUID(),
      bash,
      dir: mkdtempSync(join(tmpdir(), "execd-session-")),
      busy: false,
      runs: 0,
    };
    bash.on("exit", () => this.forget(session));
    bash.stdin?.on("error", () => undefined);
    this.sessions.set(session.id, session);
    return session.id;
  }

  /** Runs a command in the session (found with `find`) and streams it, as `POST /command` does. */
  run(session: Session, run: SessionRun, stream: EventStream): void {
    this.execute(session, run.command, stream, run.framing, run.cwd, run.timeout);
  }

  /** Runs code in a session for a bash code context: its output in chunks, as every `/code` run's. */
  runCode(id: string, code: string, stream: EventStream): void {
    this.execute(this.find(id), code, stream, "chunks");
  }

  close(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    killGroup(session.bash, "SIGKILL");
    this.forget(session);
  }

  private execute(
    session: Session,
    command: string,
    stream: EventStream,
    framing: OutputFraming,
    cwd?: string,
    timeout?: number,
  ): void {
    const id = session.id;
    if (session.busy)
      throw new PaddockError(ExecdErrors.sessionBusy, `session ${id} is already running a command`);
    session.busy = true;
    session.runs++;
    const file = join(session.dir, `run-${session.runs}.sh`);
    writeFileSync(file, command);
    const marker = `__paddock_end_${randomUUID().replace(/-/g, "")}__`;
    const sse = stream.open();
    const started = Date.now();
    sse.send({ type: "init", text: id });
    sse.send({ type: "execution_count", execution_count: session.runs });

    let exitCode: number | undefined;
    let ended = 0;
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      session.bash.stdout?.off("data", onStdout);
      session.bash.stderr?.off("data", onStderr);
      session.bash.off("exit", onExit);
      session.busy = false;
      stdout.end();
      stderr.end();
      flow.release();
      const execution_time = Date.now() - started;
      if (!error && exitCode === 0) sse.send({ type: "execution_complete", execution_time, exit_code: 0 });
      else {
        sse.send({
          type: "error",
          execution_time,
          exit_code: exitCode ?? -1,
          error: {
            ename: error ? "SessionError" : "CommandExecError",
            evalue: error ?? String(exitCode),
            traceback: [],
          },
        });
      }
      sse.end();
    };
    // A slow client pauses the shell's output (the run blocks on its pipe); the shell is the
    // session's, so it is let go at the end of the run.
    const flow = backpressure(
      () => sse.drained(),
      () => [session.bash.stdout, session.bash.stderr],
    );
    const send = (event: SseEvent) => {
      if (!sse.send(event)) flow.full();
      return true;
    };
    const text = (bytes: Buffer, start: number, end: number) => bytes.toString("utf8", start, end);
    const stdout = outputWriter(framing, "session", (...line) =>
      send({ type: "stdout", text: text(...line) }),
    );
    const stderr = outputWriter(framing, "session", (...line) =>
      send({ type: "stderr", text: text(...line) }),
    );
    // The marker is found in text, so the writers get the text's bytes again. The decoders hold
    // a character cut between two pipe reads until its last byte comes.
    const out = new MarkerSplitter(marker, (text) => stdout.push(Buffer.from(text)));
    const err = new MarkerSplitter(marker, (text) => stderr.push(Buffer.from(text)));
    const outText = new StringDecoder("utf8");
    const errText = new StringDecoder("utf8");
    let statusText = "";
    const onStdout = (chunk: Buffer) => {
      if (exitCode !== undefined) statusText += chunk.toString();
      else {
        const rest = out.push(outText.write(chunk));
        if (rest === undefined) return;
        statusText = rest;
      }
      const status = /^:(\d+)\n/.exec(statusText);
      if (status) {
        exitCode = Number(status[1]);
        if (++ended === 2) finish();
      }
    };
    const onStderr = (chunk: Buffer) => {
      if (err.push(errText.write(chunk)) !== undefined && ++ended === 2) finish();
    };
    const onExit = () => finish("the session's shell exited");
    session.bash.stdout?.on("data", onStdout);
    session.bash.stderr?.on("data", onStderr);
    session.bash.once("exit", onExit);
    const timer = timeout
      ? setTimeout(() => {
          killGroup(session.bash, "SIGKILL");
          finish(`timed out after ${timeout} ms; the session was ended`);
        }, timeout)
      : undefined;

    const enter = cwd ? `pushd ${shellQuote(cwd)} >/dev/null && ` : "";
    const leave = cwd ? "; popd >/dev/null" : "";
    session.bash.stdin?.write(
      `${enter}source ${shellQuote(file)} </dev/null; __paddock_rc=$?${leave}; printf '%s:%d\\n' ${marker} $__paddock_rc; printf '%s' ${marker} >&2\n`,
    );
  }

  /** Ends a session (its shell and whatever it runs), or 404. */
  remove(id: string): void {
    this.find(id);
    this.close(id);
  }

  /** How many sessions are running a command now (an idle shell waiting for the next run is not). */
  busyCount(): number {
    let busy = 0;
    for (const session of this.sessions.values()) if (session.busy) busy++;
    return busy;
  }

  closeAll(): void {
    for (const session of this.sessions.values()) killGroup(session.bash, "SIGKILL");
  }

  private forget(session: Session): void {
    this.sessions.delete(session.id);
    rmSync(session.dir, { recursive: true, force: true });
  }

  /** A session by id, or 404. */
  find(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw new PaddockError(ExecdErrors.sessionNotFound, `no session ${id}`);
    return session;
  }
}

export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
