import { Errors, PaddockError } from "@paddock/common/errors";
import { notOneOf } from "@paddock/common/validation-messages";

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

/** A language by its name or an alias, or 400. */
export function codeLanguage(name: string, where = "body.language"): Language {
  const language = aliases[name.toLowerCase()];
  if (!language) throw new PaddockError(Errors.invalidRequest, notOneOf(where, languages, name));
  return language;
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
