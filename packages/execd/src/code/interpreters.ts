import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { EXECD_ENVD_USER_ENV, EXECD_MOUNT, execdNode } from "@paddock/common/contracts";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { MarkerSplitter } from "../commands/marker-splitter.js";
import type { Environment } from "../environment.js";
import { isRecord } from "../json.js";
import type { Sessions } from "../sessions/sessions.js";
import { backpressure } from "../streams/backpressure.js";
import type { CellError, CellEvent, CellOptions, CellSink, Language } from "./cells.js";
import { javascriptDriver } from "./drivers/javascript.js";
import { pythonDriver } from "./drivers/python.js";
import { detectKernelSupport, JupyterKernel, type KernelSupport } from "./jupyter-kernel.js";
import { kernelEvent, replyError } from "./kernel-events.js";

type DriverMessage = { type: string; [field: string]: unknown };

/** A code context's interpreter: a kernel, a built-in driver process, or a bash session. */
export interface Context {
  id: string;
  language: Language;
  cwd: string;
  driver?: ChildProcess;
  control?: Writable;
  /** Replies from the driver go to whoever is running the current cell. */
  onMessage?: (message: DriverMessage) => void;
  busy: boolean;
  /** Bash contexts are bash sessions. */
  sessionId?: string;
  /** Python contexts run on an IPython kernel where the image has ipykernel. */
  kernel?: JupyterKernel;
  /** Why the kernel died, until a run has been told (see runOnKernel). */
  kernelDeath?: { reason: string; reported: boolean };
}

/** The Node binary and the arguments that start it: in a sandbox, execd's own Node through its
 *  loader (process.execPath is then the loader itself); elsewhere the running Node. */
function nodeCommand(): [string, string[]] {
  if (process.execPath.startsWith(EXECD_MOUNT)) {
    const [loader, ...args] = execdNode();
    return [loader as string, args];
  }
  return [process.execPath, []];
}

function javascriptCommand(): [string, string[]] {
  const [node, prefix] = nodeCommand();
  // No warnings: stripTypeScriptTypes is "experimental" and would print on the cell's stderr.
  return [node, [...prefix, "--no-warnings", "-e", javascriptDriver]];
}

/** execd answers a missing interpreter with 501 where the control plane answers 400 (its template's choice). */
const languageUnavailable = { ...Errors.languageUnavailable, status: 501 };

function pythonCommand(): string {
  for (const candidate of ["/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python"])
    if (existsSync(candidate)) return candidate;
  throw new PaddockError(languageUnavailable, "this sandbox's image has no Python (python3)");
}

const INLINE_BACKEND = "module://matplotlib_inline.backend_inline";

function kernelDied(reason: string): CellEvent {
  return {
    type: "error",
    error: {
      ename: "ContextDied",
      evalue: `${reason}; its state is lost, and the next run starts a new kernel`,
      traceback: [],
    },
  };
}

/**
 * Where contexts start unless told otherwise: the home of the sandbox's default user when its
 * image names one (E2B's templates: /home/user, where E2B's code interpreter starts its
 * contexts; the kernels still run as root, as E2B's do), else execd's own home.
 */
export function homeDirectory(): string {
  const user = process.env[EXECD_ENVD_USER_ENV];
  if (user) {
    const passwd = existsSync("/etc/passwd") ? readFileSync("/etc/passwd", "utf8") : "";
    const home = passwd
      .split("\n")
      .map((line) => line.split(":"))
      .find(([name]) => name === user)?.[5];
    if (home) return home;
  }
  return process.env.HOME ?? "/";
}

/** A driver's reply as a cell event ("done" and anything unknown are not events). */
function driverEvent(message: DriverMessage): CellEvent | undefined {
  switch (message.type) {
    case "execution_count":
      return { type: "execution_count", execution_count: Number(message.execution_count) };
    case "result":
      return {
        type: "result",
        results: isRecord(message.results) ? message.results : {},
        main: message.main !== false,
      };
    case "error":
      return { type: "error", error: message.error as CellError };
    default:
      return undefined;
  }
}

/**
 * Python that sets `env` in a kernel, and Python that puts back what the kernel started with
 * afterwards (execd's environment, where the kernel's own came from). Neither leaves a name in
 * the user's namespace.
 */
function kernelEnvCode(env: Record<string, string>, base: Record<string, string>): [string, string] {
  const names = Object.keys(env);
  const restored = Object.fromEntries(names.filter((name) => name in base).map((name) => [name, base[name]]));
  const removed = names.filter((name) => !(name in base));
  // JSON objects and arrays of strings are Python literals too.
  return [
    `__import__("os").environ.update(${JSON.stringify(env)})`,
    `(lambda e: (e.update(${JSON.stringify(restored)}), [e.pop(n, None) for n in ${JSON.stringify(removed)}]))(__import__("os").environ)`,
  ];
}

/** The table the contexts live in, as far as their interpreters need it. */
export interface ContextTable {
  /** Puts a started context in the table, under its id. */
  add(context: Context): void;
  /** Whether `context` is still the one its id names (not removed, not restarted). */
  isCurrent(context: Context): boolean;
  /** Drops `context` from the table, if it is still the one its id names. */
  forget(context: Context): void;
}

/**
 * Starts, runs, interrupts and stops the interpreters behind code contexts: a cell goes to the
 * context's kernel (Python where the image has ipykernel) or to its driver process.
 */
export class Interpreters {
  /** Whether the image has ipykernel: asked once per execd. */
  private kernelSupport?: Promise<KernelSupport | undefined>;

  constructor(
    private readonly env: Environment,
    private readonly sessions: Sessions,
    private readonly table: ContextTable,
  ) {}

  /** Runs a cell; resolves when it is over. A busy context is 409. */
  run(context: Context, code: string, sink: CellSink, options: CellOptions): Promise<void> {
    if (context.busy)
      throw new PaddockError(ExecdErrors.contextBusy, `context ${context.id} is already running code`);
    return context.kernel
      ? this.runOnKernel(context, code, sink, options)
      : this.runOnDriver(context, code, sink, options);
  }

  private runOnDriver(context: Context, code: string, sink: CellSink, options: CellOptions): Promise<void> {
    context.busy = true;
    const marker = `__paddock_cell_${randomUUID().replace(/-/g, "")}__`;
    sink.start(context.id);
    return new Promise((resolve) => {
      let ended = 0;
      let done = false;
      const finish = (reason?: string) => {
        if (done) return;
        done = true;
        context.busy = false;
        context.driver?.stdout?.off("data", onStdout);
        context.driver?.stderr?.off("data", onStderr);
        context.driver?.off("exit", onExit);
        options.signal?.removeEventListener("abort", onAbort);
        context.onMessage = undefined;
        // The interpreter lives on for the next cell.
        flow.release();
        if (reason)
          sink.event({ type: "error", error: { ename: "ContextDied", evalue: reason, traceback: [] } });
        resolve();
      };
      // A client that is behind pauses the interpreter's output (the cell blocks on its pipes).
      const driver = context.driver;
      const flow = backpressure(
        () => sink.drained?.() ?? Promise.resolve(),
        () => [driver?.stdout, driver?.stderr, driver?.stdio[4] as Readable | undefined],
      );
      const deliver = (event: CellEvent) => {
        if (sink.event(event) === false) flow.full();
      };
      const out = new MarkerSplitter(marker, (text) => deliver({ type: "stdout", text }));
      const err = new MarkerSplitter(marker, (text) => deliver({ type: "stderr", text }));
      const settle = () => {
        if (++ended === 3) finish();
      };
      const onStdout = (chunk: Buffer) => {
        if (out.push(chunk.toString("utf8")) !== undefined) settle();
      };
      const onStderr = (chunk: Buffer) => {
        if (err.push(chunk.toString("utf8")) !== undefined) settle();
      };
      const onExit = () => {
        this.table.forget(context);
        finish("the interpreter exited; create a new context");
      };
      const onAbort = () => this.interrupt(context);
      context.onMessage = (message) => {
        if (message.type === "done") return settle();
        const event = driverEvent(message);
        if (event) deliver(event);
      };
      context.driver?.stdout?.on("data", onStdout);
      context.driver?.stderr?.on("data", onStderr);
      context.driver?.once("exit", onExit);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      context.control?.write(`${JSON.stringify({ code, marker, env: options.env })}\n`);
    });
  }

  /**
   * A cell on the context's kernel. A kernel's death is reported once, as an error: to the cell
   * running when it died, or else to the next run, which then does not run its code. The run
   * after a death starts a fresh kernel (empty state, execution_count from 1).
   */
  private async runOnKernel(
    context: Context,
    code: string,
    sink: CellSink,
    options: CellOptions,
  ): Promise<void> {
    context.busy = true;
    try {
      if (context.kernelDeath) {
        const death = context.kernelDeath;
        try {
          await this.startKernel(context, (await this.kernelSupport) as KernelSupport);
        } catch (error) {
          throw new PaddockError(
            ExecdErrors.kernelUnavailable,
            `the kernel could not be restarted: ${(error as Error).message}`,
          );
        }
        context.kernelDeath = undefined;
        if (!death.reported) {
          sink.start(context.id);
          sink.event(kernelDied(death.reason));
          return;
        }
      }
      const kernel = context.kernel as JupyterKernel;
      sink.start(context.id);
      const onAbort = () => kernel.interrupt();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const [setEnv, resetEnv] = options.env ? kernelEnvCode(options.env, this.env.forProcess()) : [];
      const setup = [options.kernelSetup, setEnv].filter(Boolean).join("\n");
      const ignore = () => undefined;
      let failed = false;
      // A client that is behind stops the reading of the kernel's output (see decision 0171).
      const flow = backpressure(
        () => sink.drained?.() ?? Promise.resolve(),
        () => [kernel.output],
      );
      try {
        if (setup) await kernel.execute(setup, ignore, true);
        // A caller gone before the cell is sent (an interrupt then reaches no cell) skips it.
        if (!options.signal?.aborted) {
          const reply = await kernel.execute(code, (message) => {
            const event = kernelEvent(message);
            if (event?.type === "error") failed = true;
            if (event && sink.event(event) === false) flow.full();
          });
          // An error reply whose iopub error went missing still fails the cell.
          if (reply.status !== "ok" && !failed) sink.event(replyError(reply));
        }
        if (resetEnv) await kernel.execute(resetEnv, ignore, true);
      } catch (error) {
        // Died mid-cell: this cell is told, the next run just starts a new kernel.
        context.kernelDeath = { reason: (error as Error).message, reported: true };
        sink.event(kernelDied((error as Error).message));
      } finally {
        options.signal?.removeEventListener("abort", onAbort);
        flow.release();
      }
    } finally {
      context.busy = false;
    }
  }

  interrupt(context: Context): void {
    if (context.kernel) context.kernel.interrupt();
    else context.driver?.kill("SIGINT");
  }

  /** Ends a context at once, its kernel killed (execd shutting down). */
  kill(context: Context): void {
    // Kernels run in process groups of their own: nothing else would end them.
    context.kernel?.kill();
    this.stop(context);
  }

  async start(language: Language, id: string, cwd: string): Promise<Context> {
    if (language === "bash") {
      const sessionId = await this.sessions.open(cwd);
      const context: Context = { id, language, cwd, busy: false, sessionId };
      this.table.add(context);
      return context;
    }
    if (language === "python") {
      this.kernelSupport ??= detectKernelSupport(pythonCommand(), this.env.forProcess());
      const support = await this.kernelSupport;
      if (support) {
        const context: Context = { id, language, cwd, busy: false };
        try {
          await this.startKernel(context, support);
          this.table.add(context);
          return context;
        } catch (error) {
          console.error(`execd: no IPython kernel (${(error as Error).message}); using the built-in driver`);
        }
      }
    }
    const [file, args] =
      language === "python" ? [pythonCommand(), ["-u", "-c", pythonDriver]] : javascriptCommand();
    const driver = spawn(file, args, {
      env: this.env.forProcess({
        MPLBACKEND: "Agg",
        PYTHONUNBUFFERED: "1",
        ...(language === "typescript" ? { PADDOCK_DRIVER_LANGUAGE: "typescript" } : {}),
      }),
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
      cwd,
    });
    const context: Context = { id, language, cwd, driver, control: driver.stdio[3] as Writable, busy: false };
    driver.on("error", () => this.table.forget(context));
    driver.on("exit", () => this.table.forget(context));
    (driver.stdio[3] as Writable).on("error", () => undefined);
    const replies = createInterface({ input: driver.stdio[4] as NodeJS.ReadableStream });
    replies.on("line", (line) => {
      try {
        context.onMessage?.(JSON.parse(line) as DriverMessage);
      } catch {
        // A malformed line from the driver is dropped.
      }
    });
    this.table.add(context);
    return context;
  }

  /** Starts the context's kernel; its death is remembered for the next run to report. */
  private async startKernel(context: Context, support: KernelSupport): Promise<void> {
    // Images set MPLBACKEND=Agg for scripts; in a kernel, figures should come back as images.
    const backend = this.env.forProcess().MPLBACKEND;
    const options = {
      python: pythonCommand(),
      env: this.env.forProcess({
        PYTHONUNBUFFERED: "1",
        ...(!backend || backend.toLowerCase() === "agg" ? { MPLBACKEND: INLINE_BACKEND } : {}),
      }),
      cwd: context.cwd,
      interruptMode: support.interruptMode,
    };
    // A second try: another process may take one of the free ports before the kernel binds it.
    const kernel = await JupyterKernel.start(options).catch(() => JupyterKernel.start(options));
    // Whatever the dead kernel's cells left running in its process group goes with it.
    context.kernel?.kill();
    context.kernel = kernel;
    kernel.onceExit((reason) => {
      if (context.kernel === kernel && this.table.isCurrent(context))
        context.kernelDeath = { reason, reported: false };
    });
  }

  stop(context: Context): void {
    // A busy kernel would only answer shutdown after its cell: it is killed instead.
    if (context.busy) context.kernel?.kill();
    else context.kernel?.shutdown().catch(() => undefined);
    context.driver?.kill("SIGKILL");
    if (context.sessionId) this.sessions.close(context.sessionId);
    this.table.forget(context);
  }
}
