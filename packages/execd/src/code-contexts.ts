import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createInterface } from "node:readline";
import type { Writable } from "node:stream";
import { EXECD_DEFAULT_CODE_CONTEXT, EXECD_MOUNT } from "@paddock/common/contracts";
import { javascriptDriver } from "./drivers/javascript.js";
import { pythonDriver } from "./drivers/python.js";
import type { Environment } from "./environment.js";
import {
  badRequest,
  contextNotFound,
  ExecdError,
  isRecord,
  optionalString,
  queryOne,
  readObject,
  sendJson,
} from "./http.js";
import { detectKernelSupport, JupyterKernel, type KernelSupport } from "./jupyter-kernel.js";
import { kernelEvent, replyError } from "./kernel-events.js";
import { MarkerSplitter } from "./marker-splitter.js";
import type { Sessions } from "./sessions.js";
import { openSse } from "./sse-response.js";

type DriverMessage = { type: string; [field: string]: unknown };

interface Context {
  id: string;
  language: string;
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
const aliases: Record<string, (typeof languages)[number]> = {
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
    return [
      `${EXECD_MOUNT}/lib/ld-linux-x86-64.so.2`,
      ["--library-path", `${EXECD_MOUNT}/lib`, `${EXECD_MOUNT}/bin/node`],
    ];
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
  throw new ExecdError(501, "language_unavailable", "this sandbox's image has no Python (python3)");
}

const INLINE_BACKEND = "module://matplotlib_inline.backend_inline";

function kernelDied(reason: string) {
  return {
    ename: "ContextDied",
    evalue: `${reason}; its state is lost, and the next run starts a new kernel`,
    traceback: [],
  };
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
    const context = await this.start(this.language(optionalString(body, "language") ?? "python"));
    sendJson(res, 200, { id: context.id, language: context.language });
  }

  list(url: URL, res: ServerResponse): void {
    const language = queryOne(url, "language");
    const wanted = language ? this.language(language) : undefined;
    sendJson(
      res,
      200,
      [...this.contexts.values()]
        .filter((c) => !wanted || c.language === wanted)
        .map((c) => ({ id: c.id, language: c.language })),
    );
  }

  get(id: string, res: ServerResponse): void {
    const context = this.find(id);
    sendJson(res, 200, { id: context.id, language: context.language });
  }

  remove(id: string, res: ServerResponse): void {
    this.stop(this.find(id));
    sendJson(res, 200, {});
  }

  removeLanguage(url: URL, res: ServerResponse): void {
    const language = this.language(queryOne(url, "language", true) as string);
    for (const context of [...this.contexts.values()]) if (context.language === language) this.stop(context);
    sendJson(res, 200, {});
  }

  interrupt(url: URL, res: ServerResponse): void {
    const context = this.find(queryOne(url, "id", true) as string);
    if (context.busy && context.kernel) context.kernel.interrupt();
    else if (context.busy) context.driver?.kill("SIGINT");
    sendJson(res, 200, { id: context.id, interrupted: context.busy });
  }

  async run(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readObject(req);
    const code = optionalString(body, "code");
    if (code === undefined) throw badRequest("code is required");
    const requested = isRecord(body.context) ? body.context : {};
    const requestedId = typeof requested.id === "string" ? requested.id : "";
    const language = () =>
      this.language(typeof requested.language === "string" ? requested.language : "python");
    // Without a context id the run is stateless: its context (a whole kernel, for Python in an
    // image with ipykernel) is removed when the run ends.
    const stateless = !requestedId;
    const context = stateless
      ? await this.start(language())
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
    if (context.kernel) return this.runOnKernel(context, code, res);
    if (context.busy)
      throw new ExecdError(409, "context_busy", `context ${context.id} is already running code`);
    context.busy = true;
    const marker = `__paddock_cell_${randomUUID().replace(/-/g, "")}__`;
    const sse = openSse(res);
    const started = Date.now();
    sse.send({ type: "init", text: context.id });
    let ended = 0;
    let failed = false;
    let done = false;
    const finish = (reason?: string) => {
      if (done) return;
      done = true;
      context.busy = false;
      context.driver?.stdout?.off("data", onStdout);
      context.driver?.stderr?.off("data", onStderr);
      context.driver?.off("exit", onExit);
      context.onMessage = undefined;
      if (reason) sse.send({ type: "error", error: { ename: "ContextDied", evalue: reason, traceback: [] } });
      else if (!failed) sse.send({ type: "execution_complete", execution_time: Date.now() - started });
      sse.end();
    };
    const out = new MarkerSplitter(marker, (text) => sse.send({ type: "stdout", text }));
    const err = new MarkerSplitter(marker, (text) => sse.send({ type: "stderr", text }));
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
      this.contexts.delete(context.id);
      finish("the interpreter exited; create a new context");
    };
    context.onMessage = (message) => {
      if (message.type === "done") return settle();
      if (message.type === "error") failed = true;
      sse.send(message as { type: string });
    };
    context.driver?.stdout?.on("data", onStdout);
    context.driver?.stderr?.on("data", onStderr);
    context.driver?.once("exit", onExit);
    context.control?.write(`${JSON.stringify({ code, marker })}\n`);
  }

  /**
   * A cell on the context's kernel. A kernel's death is reported once, as an error: to the cell
   * running when it died, or else to the next run, which then does not run its code. The run
   * after a death starts a fresh kernel (empty state, execution_count from 1).
   */
  private async runOnKernel(context: Context, code: string, res: ServerResponse): Promise<void> {
    if (context.busy)
      throw new ExecdError(409, "context_busy", `context ${context.id} is already running code`);
    context.busy = true;
    try {
      if (context.kernelDeath) {
        const death = context.kernelDeath;
        try {
          await this.startKernel(context, (await this.kernelSupport) as KernelSupport);
        } catch (error) {
          throw new ExecdError(
            503,
            "kernel_unavailable",
            `the kernel could not be restarted: ${(error as Error).message}`,
          );
        }
        context.kernelDeath = undefined;
        if (!death.reported) {
          const sse = openSse(res);
          sse.send({ type: "init", text: context.id });
          sse.send({ type: "error", error: kernelDied(death.reason) });
          sse.end();
          return;
        }
      }
      const kernel = context.kernel as JupyterKernel;
      const sse = openSse(res);
      const started = Date.now();
      sse.send({ type: "init", text: context.id });
      let failed = false;
      try {
        const reply = await kernel.execute(code, (message) => {
          const event = kernelEvent(message);
          if (event?.type === "error") failed = true;
          if (event) sse.send(event);
        });
        // An error reply whose iopub error went missing still fails the cell.
        if (reply.status !== "ok" && !failed) {
          failed = true;
          sse.send(replyError(reply));
        }
        if (!failed) sse.send({ type: "execution_complete", execution_time: Date.now() - started });
      } catch (error) {
        // Died mid-cell: this cell is told, the next run just starts a new kernel.
        context.kernelDeath = { reason: (error as Error).message, reported: true };
        sse.send({ type: "error", error: kernelDied((error as Error).message) });
      }
      sse.end();
    } finally {
      context.busy = false;
    }
  }

  /**
   * The language's default context (`default-<language>`), started on first use. Concurrent
   * first runs share one start; a default context that was removed or whose interpreter exited
   * is started afresh.
   */
  private async defaultContext(language: (typeof languages)[number]): Promise<Context> {
    const id = `${EXECD_DEFAULT_CODE_CONTEXT}-${language}`;
    const existing = this.contexts.get(id);
    if (existing) return existing;
    let starting = this.startingDefaults.get(id);
    if (!starting) {
      starting = this.start(language, id).finally(() => this.startingDefaults.delete(id));
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

  private language(name: string): (typeof languages)[number] {
    const language = aliases[name.toLowerCase()];
    if (!language)
      throw badRequest(`language ${name} is not supported here; use one of ${languages.join(", ")}`);
    return language;
  }

  private async start(language: (typeof languages)[number], id: string = randomUUID()): Promise<Context> {
    if (language === "bash") {
      const sessionId = await this.sessions.open(undefined);
      const context: Context = { id, language, busy: false, sessionId };
      this.contexts.set(id, context);
      return context;
    }
    if (language === "python") {
      this.kernelSupport ??= detectKernelSupport(pythonCommand(), this.env.forProcess());
      const support = await this.kernelSupport;
      if (support) {
        const context: Context = { id, language, busy: false };
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
      cwd: process.env.HOME ?? "/",
    });
    const context: Context = { id, language, driver, control: driver.stdio[3] as Writable, busy: false };
    driver.on("error", () => this.contexts.delete(id));
    driver.on("exit", () => this.contexts.delete(id));
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
      cwd: process.env.HOME ?? "/",
      interruptMode: support.interruptMode,
    };
    // A second try: another process may take one of the free ports before the kernel binds it.
    const kernel = await JupyterKernel.start(options).catch(() => JupyterKernel.start(options));
    // Whatever the dead kernel's cells left running in its process group goes with it.
    context.kernel?.kill();
    context.kernel = kernel;
    kernel.onceExit((reason) => {
      if (context.kernel === kernel && this.contexts.has(context.id))
        context.kernelDeath = { reason, reported: false };
    });
  }

  private stop(context: Context): void {
    // A busy kernel would only answer shutdown after its cell: it is killed instead.
    if (context.busy) context.kernel?.kill();
    else context.kernel?.shutdown().catch(() => undefined);
    context.driver?.kill("SIGKILL");
    if (context.sessionId) this.sessions.close(context.sessionId);
    this.contexts.delete(context.id);
  }

  private find(id: string): Context {
    const context = this.contexts.get(id);
    if (!context) throw contextNotFound(`no code context ${id}`);
    return context;
  }
}
