import { EXECD_TOKEN_ENV, EXECD_WORKDIR_ENV } from "@paddock/common/contracts";

/** Where a command starts when it names no directory: the template's WORKDIR, else the home. */
export function defaultDirectory(): string {
  return process.env[EXECD_WORKDIR_ENV] || process.env.HOME || "/";
}

/**
 * The environment every process execd starts inherits: execd's own environment without its
 * token, plus whatever was set later through the env extension (a warm pool's claim).
 */
export class Environment {
  private readonly values: Record<string, string> = {};
  /** Counts changes, so a process started ahead of time can tell it has a stale copy. */
  revision = 0;

  constructor(initial: NodeJS.ProcessEnv) {
    for (const [name, value] of Object.entries(initial)) {
      if (value !== undefined && name !== EXECD_TOKEN_ENV) this.values[name] = value;
    }
  }

  set(values: Record<string, string>): void {
    Object.assign(this.values, values);
    this.revision++;
  }

  /** The environment for a new process, with per-call additions on top. */
  forProcess(extra: Record<string, string> = {}): Record<string, string> {
    return { ...this.values, ...extra };
  }
}
