import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import { EXECD_DEFAULT_CODE_CONTEXT } from "@paddock/common/contracts";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import type { Environment } from "../environment.js";
import type { Sessions } from "../sessions/sessions.js";
import type { EventStream } from "../streams/event-sink.js";
import { cellStream } from "./cell-stream.js";
import {
  type CellOptions,
  type CellSink,
  type ContextInfo,
  checkEnv,
  codeLanguage,
  type Language,
} from "./cells.js";
import { type Context, homeDirectory, Interpreters } from "./interpreters.js";

/** A `/code` run, as `POST /code` asks for it (checked by the HTTP layer). */
export interface CodeRun {
  code: string;
  /** The context to run in: an id, `default` (the language's default context), or "" for a
   *  stateless run on a context of its own. */
  contextId: string;
  /** The language of a default or stateless run's context, as sent (Python when absent). */
  language?: string;
}

/** Stateful code contexts: a long-lived interpreter per context, state kept between runs. */
export class CodeContexts {
  private readonly contexts = new Map<string, Context>();
  /** Default contexts being started, so concurrent first runs share one. */
  private readonly startingDefaults = new Map<string, Promise<Context>>();
  private readonly interpreters: Interpreters;

  constructor(
    env: Environment,
    private readonly sessions: Sessions,
  ) {
    this.interpreters = new Interpreters(env, sessions, {
      add: (context) => this.contexts.set(context.id, context),
      isCurrent: (context) => this.contexts.get(context.id) === context,
      forget: (context) => this.forget(context),
    });
  }

  /**
   * Runs code and streams it: `init`, the cell's output and results, `execution_complete`
   * unless it failed. A client that leaves interrupts its cell.
   */
  async run(request: CodeRun, stream: EventStream): Promise<void> {
    const { code, contextId } = request;
    const language = () => codeLanguage(request.language ?? "python", "body.context.language");
    // Without a context id the run is stateless: its context (a whole kernel, for Python in an
    // image with ipykernel) is removed when the run ends.
    const stateless = !contextId;
    const context = stateless
      ? await this.interpreters.start(language(), randomUUID(), homeDirectory())
      : contextId === EXECD_DEFAULT_CODE_CONTEXT
        ? await this.defaultContext(language())
        : this.find(contextId);
    if (stateless) {
      if (stream.closed.aborted) this.interpreters.stop(context);
      else stream.closed.addEventListener("abort", () => this.interpreters.stop(context), { once: true });
    }
    if (context.sessionId) {
      // Bash contexts run as session runs (same SSE events).
      this.sessions.runCode(context.sessionId, code, stream);
      return;
    }
    // A client that leaves interrupts its cell: nobody would read its output.
    const left = new AbortController();
    let answered = false;
    stream.closed.addEventListener(
      "abort",
      () => {
        if (!answered) left.abort();
      },
      { once: true },
    );
    const sink = cellStream(stream);
    await this.interpreters.run(context, code, sink, { signal: left.signal });
    answered = true;
    sink.end();
  }

  /** Starts a context; `cwd` (default: the home directory) must be a directory. */
  async createContext(language: string, cwd?: string): Promise<ContextInfo> {
    const wanted = codeLanguage(language);
    const directory = resolvePath(homeDirectory(), cwd ?? ".");
    const stats = await stat(directory).catch(() => undefined);
    if (!stats?.isDirectory())
      throw new PaddockError(Errors.invalidRequest, `cwd ${directory} is not a directory`);
    return info(await this.interpreters.start(wanted, randomUUID(), directory));
  }

  /** A context by id, or 404. */
  context(id: string): ContextInfo {
    return info(this.find(id));
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
    this.interpreters.stop(this.find(id));
  }

  /** The same context (id, language, directory) on a fresh interpreter: its state is gone. */
  async restartContext(id: string): Promise<void> {
    const context = this.find(id);
    this.interpreters.stop(context);
    await this.interpreters.start(context.language, context.id, context.cwd);
  }

  /** Stops every context of a language. */
  removeLanguage(language: Language): void {
    for (const context of [...this.contexts.values()])
      if (context.language === language) this.interpreters.stop(context);
  }

  /** Interrupts the context's running cell, if any; reports whether one was running. */
  interrupt(id: string): { id: string; interrupted: boolean } {
    const context = this.find(id);
    const interrupted = context.busy;
    if (interrupted) this.interpreters.interrupt(context);
    return { id: context.id, interrupted };
  }

  /** Runs a cell on a kernel or driver context; resolves when the cell is over. */
  async execute(id: string, code: string, sink: CellSink, options: CellOptions = {}): Promise<void> {
    const context = this.find(id);
    if (context.sessionId)
      throw new PaddockError(Errors.notImplemented, "bash contexts run through /code only");
    if (options.env) checkEnv(options.env);
    await this.interpreters.run(context, code, sink, options);
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
      starting = this.interpreters
        .start(language, id, homeDirectory())
        .finally(() => this.startingDefaults.delete(id));
      this.startingDefaults.set(id, starting);
    }
    return starting;
  }

  /**
   * How many contexts are running a cell now (`/code` and the code interpreter's `/execute`); an
   * idle interpreter waiting for its next cell is not. Bash contexts' runs are their sessions'.
   */
  busyCount(): number {
    let busy = 0;
    for (const context of this.contexts.values()) if (context.busy) busy++;
    return busy;
  }

  closeAll(): void {
    for (const context of [...this.contexts.values()]) this.interpreters.kill(context);
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
