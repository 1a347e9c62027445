import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { resolve as resolvePath } from "node:path";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import {
  EXECD_DEFAULT_CODE_CONTEXT,
  EXECD_ENVD_USER_ENV,
  EXECD_MOUNT,
  execdNode,
} from "@paddock/common/contracts";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { missingProperty, notOneOf } from "@paddock/common/validation-messages";
import { MarkerSplitter } from "../commands/marker-splitter.js";
import type { Environment } from "../environment.js";
import { sendJson } from "../http/answers.js";
import { isRecord, optionalString, queryOne, readObject } from "../http/request.js";
import type { Sessions } from "../sessions/sessions.js";
import { SharedCodes } from "../shared-codes.js";
import { backpressure, drained, openSse } from "../streams/backpressure.js";
import { javascriptDriver } from "./drivers/javascript.js";
import { pythonDriver } from "./drivers/python.js";
import { detectKernelSupport, JupyterKernel, type KernelSupport } from "./jupyter-kernel.js";
import { kernelEvent, replyError } from "./kernel-events.js";

type DriverMessage = { type: string; [field: string]: unknown };

export interface CellError {
  ename: string;
  evalue: string;
  traceback: string[];
}

/** What a cell reports as it runs, whichever interpreter runs it (a kernel or a built-in driver). */
export type CellEvent =
  | { type: "execution_count"; execution_count: number }
  | { type: "stdout" | "stderr"; text: string }
  /** `main`: the cell's own value (its last expression), not something it displayed. */
  | { type: "result"; results: Record<string, unknown>; main: boolean }
  | { type: "error"; error: CellError };

/**
 * Where a cell's events go. `start` is called once, right before the first event: whatever is
 * thrown before it (a busy context, a kernel that cannot restart) is the request's error.
 */
export interface CellSink {
  start(contextId: string): void;
  /** Reports false when the client is behind: the cell's output is paused until `drained()`. */
  event(event: CellEvent): boolean | undefined;
  /** Resolves once the client has taken what waits for it, or has left. */
  drained?(): Promise<void>;
}

export interface CellOptions {
  /** Environment variables for this cell only. */
  env?: Record<string, string>;
  /** Python a kernel runs silently before the cell: idempotent set-up the caller needs. */
  kernelSetup?: string;
  /** Aborting interrupts the cell (the context and its state live on). */
  signal?: AbortSignal;
}

export interface ContextInfo {
  id: string;
  language: Language;
  cwd: string;
}

interface Context {
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

const languages = ["python", "javascript", "typescript", "bash"] as const;
export type Language = (typeof languages)[number];
const aliases: Record<string, Language> = {
  python: "python",
  python3: "python",
  javascript: "javascript",
  js: "javascript",
  node: "javascript",
  typescript: "typescript",
  ts: "typescript",
  bash: "bash",
  shell: "bash",
  sh: "bash",
};

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

function pythonCommand(): string {
  for (const candidate of ["/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python"])
    if (existsSync(candidate)) return candidate;
  throw new PaddockError(SharedCodes.languageUnavailable, "this sandbox's image has no Python (python3)");
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

/** A language by its name or an alias, or 400. */
export function codeLanguage(name: string, where = "body.language"): Language {
  const language = aliases[name.toLowerCase()];
  if (!language) throw new PaddockError(Errors.invalidRequest, notOneOf(where, languages, name));
  return language;
}

/**
 * Where contexts start unless told otherwise: the home of the sandbox's default user when its
 * image names one (E2B's templates: /home/user, where E2B's code interpreter starts its
 * contexts; the kernels still run as root, as E2B's do), else execd's own home.
 */
function homeDirectory(): string {
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

/** A /code run's SSE stream: `init` first, `execution_complete` last unless the cell failed. */
function sseCell(res: ServerResponse): CellSink & { end(): void } {
  let sse: ReturnType<typeof openSse> | undefined;
  let failed = false;
  const started = Date.now();
  return {
    start(contextId) {
      sse = openSse(res);
      sse.send({ type: "init", text: contextId });
    },
    event(event) {
      if (event.type === "error") failed = true;
      // /code's results are bare MIME bundles.
      return sse?.send(event.type === "result" ? { type: "result", results: event.results } : event);
    },
    drained: () => drained(res),
    end() {
      if (!failed) sse?.send({ type: "execution_complete", execution_time: Date.now() - started });
      sse?.end();
    },
  };
}

/** Refuses variables a process environment cannot hold, before any code runs. */
export function checkEnv(env: Record<string, string>): void {
  for (const [name, value] of Object.entries(env)) {
    if (name === "" || name.includes("=") || name.includes("\0") || value.includes("\0"))
      throw new PaddockError(
        Errors.invalidRequest,
        `${JSON.stringify(name)} cannot be an environment variable`,
      );
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

/** Stateful code contexts: a long-lived interpreter per context, state kept between runs. */
export class CodeContexts {
  private readonly contexts = new Map<string, Context>();
  /** Default contexts being started, so concurrent first runs share one. */
  private readonly startingDefaults = new Map<string, Promise<Context>>();
  /** Whether the image has ipykernel: asked once per execd. */
  private kernelSupport?: Promise<KernelSupport | undefined>;

  constructor(
    private readonly env: Environment,
    private readonly sessions: Sessions,
  ) {}

  async create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readObject(req);
    const context = await this.createContext(optionalString(body, "language") ?? "python");
    sendJson(res, 200, { id: context.id, language: context.language });
  }

  list(url: URL, res: ServerResponse): void {
    const language = queryOne(url, "language");
    sendJson(
      res,
      200,
      this.contextList(language).map((c) => ({ id: c.id, language: c.language })),
    );
  }

  get(id: string, res: ServerResponse): void {
    const context = this.find(id);
    sendJson(res, 200, { id: context.id, language: context.language });
  }

  remove(id: string, res: ServerResponse): void {
    this.removeContext(id);
    sendJson(res, 200, {});
  }

  removeLanguage(url: URL, res: ServerResponse): void {
    const language = codeLanguage(queryOne(url, "language", true) as string, "query.language");
    for (const context of [...this.contexts.values()]) if (context.language === language) this.stop(context);
    sendJson(res, 200, {});
  }

  interrupt(url: URL, res: ServerResponse): void {
    const context = this.find(queryOne(url, "id", true) as string);
    const interrupted = context.busy;
    if (interrupted) this.interruptCell(context);
    sendJson(res, 200, { id: context.id, interrupted });
  }

  async run(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readObject(req);
    const code = optionalString(body, "code");
    if (code === undefined) throw new PaddockError(Errors.invalidRequest, missingProperty("body", "code"));
    const requested = isRecord(body.context) ? body.context : {};
    const requestedId = typeof requested.id === "string" ? requested.id : "";
    const language = () =>
      codeLanguage(
        typeof requested.language === "string" ? requested.language : "python",
        "body.context.language",
      );
    // Without a context id the run is stateless: its context (a whole kernel, for Python in an
    // image with ipykernel) is removed when the run ends.
    const stateless = !requestedId;
    const context = stateless
      ? await this.start(language(), randomUUID(), homeDirectory())
      : requestedId === EXECD_DEFAULT_CODE_CONTEXT
        ? await this.defaultContext(language())
        : this.find(requestedId);
    if (stateless) {
      if (res.destroyed) this.stop(context);
      else res.once("close", () => this.stop(context));
    }
    if (context.sessionId) {
      // Bash contexts run as session runs (same SSE events).
      await this.sessions.runCode(context.sessionId, code, res);
      return;
    }
    // A client that leaves interrupts its cell: nobody would read its output.
    const left = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) left.abort();
    });
    const sse = sseCell(res);
    await this.runCell(context, code, sse, { signal: left.signal });
    sse.end();
  }

  /** Starts a context; `cwd` (default: the home directory) must be a directory. */
  async createContext(language: string, cwd?: string): Promise<ContextInfo> {
    const wanted = codeLanguage(language);
    const directory = resolvePath(homeDirectory(), cwd ?? ".");
    const stats = await stat(directory).catch(() => undefined);
    if (!stats?.isDirectory())
      throw new PaddockError(Errors.invalidRequest, `cwd ${directory} is not a directory`);
    return info(await this.start(wanted, randomUUID(), directory));
  }

  /** The contexts, of one language if it is named. */
  contextList(language?: string): ContextInfo[] {
    const wanted = language ? codeLanguage(language) : undefined;
    return [...this.contexts.values()].filter((c) => !wanted || c.language === wanted).map(info);
  }

  /** A context by id, or else the language's default context (Python's by default). */
  async contextFor(target: { id?: string; language?: string }): Promise<ContextInfo> {
    if (target.id) return info(this.find(target.id));
    return info(await this.defaultContext(codeLanguage(target.language ?? "python")));
  }

  removeContext(id: string): void {
    this.stop(this.find(id));
  }

  /** The same context (id, language, directory) on a fresh interpreter: its state is gone. */
  async restartContext(id: string): Promise<void> {
    const context = this.find(id);
    this.stop(context);
    await this.start(context.language, context.id, context.cwd);
  }

  /** Runs a cell on a kernel or driver context; resolves when the cell is over. */
  async execute(id: string, code: string, sink: CellSink, options: CellOptions = {}): Promise<void> {
    const context = this.find(id);
    if (context.sessionId)
      throw new PaddockError(Errors.notImplemented, "bash contexts run through /code only");
    if (options.env) checkEnv(options.env);
    await this.runCell(context, code, sink, options);
  }

  private runCell(context: Context, code: string, sink: CellSink, options: CellOptions): Promise<void> {
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
        this.forget(context);
        finish("the interpreter exited; create a new context");
      };
      const onAbort = () => this.interruptCell(context);
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

  private interruptCell(context: Context): void {
    if (context.kernel) context.kernel.interrupt();
    else context.driver?.kill("SIGINT");
  }

  /**
   * The language's default context (`default-<language>`), started on first use. Concurrent
   * first runs share one start; a default context that was removed or whose interpreter exited
   * is started afresh.
   */
  private async defaultContext(language: Language): Promise<Context> {
    const id = `${EXECD_DEFAULT_CODE_CONTEXT}-${language}`;
    const existing = this.contexts.get(id);
    if (existing) return existing;
    let starting = this.startingDefaults.get(id);
    if (!starting) {
      starting = this.start(language, id, homeDirectory()).finally(() => this.startingDefaults.delete(id));
      this.startingDefaults.set(id, starting);
    }
    return starting;
  }

  closeAll(): void {
    for (const context of [...this.contexts.values()]) {
      // Kernels run in process groups of their own: nothing else would end them.
      context.kernel?.kill();
      this.stop(context);
    }
  }

  private async start(language: Language, id: string, cwd: string): Promise<Context> {
    if (language === "bash") {
      const sessionId = await this.sessions.open(cwd);
      const context: Context = { id, language, cwd, busy: false, sessionId };
      this.contexts.set(id, context);
      return context;
    }
    if (language === "python") {
      this.kernelSupport ??= detectKernelSupport(pythonCommand(), this.env.forProcess());
      const support = await this.kernelSupport;
      if (support) {
        const context: Context = { id, language, cwd, busy: false };
        try {
          await this.startKernel(context, support);
          this.contexts.set(id, context);
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
    driver.on("error", () => this.forget(context));
    driver.on("exit", () => this.forget(context));
    (driver.stdio[3] as Writable).on("error", () => undefined);
    const replies = createInterface({ input: driver.stdio[4] as NodeJS.ReadableStream });
    replies.on("line", (line) => {
      try {
        context.onMessage?.(JSON.parse(line) as DriverMessage);
      } catch {
        // A malformed line from the driver is dropped.
      }
    });
    this.contexts.set(id, context);
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
      if (context.kernel === kernel && this.contexts.get(context.id) === context)
        context.kernelDeath = { reason, reported: false };
    });
  }

  private stop(context: Context): void {
    // A busy kernel would only answer shutdown after its cell: it is killed instead.
    if (context.busy) context.kernel?.kill();
    else context.kernel?.shutdown().catch(() => undefined);
    context.driver?.kill("SIGKILL");
    if (context.sessionId) this.sessions.close(context.sessionId);
    this.forget(context);
  }

  /** Drops a context from the table, unless its id already names a newer one (a restart). */
  private forget(context: Context): void {
    if (this.contexts.get(context.id) === context) this.contexts.delete(context.id);
  }

  private find(id: string): Context {
    const context = this.contexts.get(id);
    if (!context) throw new PaddockError(ExecdErrors.contextNotFound, `no code context ${id}`);
    return context;
  }
}

const info = (context: Context): ContextInfo => ({
  id: context.id,
  language: context.language,
  cwd: context.cwd,
});
