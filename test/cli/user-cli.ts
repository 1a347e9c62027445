import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";

/** The built `paddock` binary, as users run it (`npm run build` first). */
export const paddockBin = join(import.meta.dirname, "../../packages/cli/bin/paddock.js");

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A person at a shell: their own home and config directory, talking to one server. Runs the CLI
 * as a child process, never synchronously (the test server lives in this process).
 */
export class CliUser {
  readonly home = mkdtempSync(join(tmpdir(), "paddock-cli-home-"));
  readonly configHome = join(this.home, "config");

  constructor(readonly baseUrl: string) {}

  get configFile(): string {
    return join(this.configHome, "paddock", "config.json");
  }

  storedConfig(): { baseUrl?: string; credential?: { kind: string; secret: string; email?: string } } {
    return JSON.parse(readFileSync(this.configFile, "utf8"));
  }

  /** The environment the CLI sees: no PADDOCK_* variables unless `env` gives them. */
  environment(env: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: this.home,
      XDG_CONFIG_HOME: this.configHome,
      PADDOCK_BASE_URL: this.baseUrl,
      ...env,
    };
  }

  run(
    args: string[],
    options: { input?: string | Buffer; env?: Record<string, string> } = {},
  ): Promise<CliResult> {
    const child = spawn(process.execPath, [paddockBin, ...args], {
      env: this.environment(options.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    child.stdin.end(options.input);
    return new Promise((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (status) => resolve({ status, stdout, stderr }));
    });
  }

  /** The same environment as a shell command prefix, `env NAME=value …`, for a terminal's command line. */
  shellEnvironment(env: Record<string, string> = {}): string {
    const pairs = Object.entries(this.environment(env)).map(([name, value]) => `${name}=${value}`);
    return `env ${pairs.join(" ")}`;
  }

  /** Runs a command that must succeed and answers its stdout parsed as JSON. */
  async json<T = unknown>(args: string[]): Promise<T> {
    const result = await this.run([...args, "--json"]);
    if (result.status !== 0) throw new Error(`paddock ${args.join(" ")} failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as T;
  }

  /** Signs up (which logs in) as `name@example.com`. */
  async signUp(name: string): Promise<void> {
    const result = await this.run(["signup", "--email", `${name}@example.com`, "--password", password]);
    if (result.status !== 0) throw new Error(`signup failed: ${result.stderr}`);
  }
}

export const password = "correct horse battery";

/** The one line a failed command prints: `paddock: <detail> (<code>)`. */
export const errorLine = (code: string) => new RegExp(`^paddock: \\S.* \\(${code}\\)\\n$`);

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
let panes = 0;

/** A real terminal: a tmux pane of `cols` × `rows` running a shell command line, read back as its screen. */
export class TmuxPane {
  readonly name = `paddock-cli-${process.pid}-${++panes}`;

  constructor(commandLine: string, size: { cols: number; rows: number } = { cols: 100, rows: 30 }) {
    tmux("new-session", "-d", "-s", this.name, "-x", String(size.cols), "-y", String(size.rows), commandLine);
  }

  /** What the pane shows, wrapped lines joined, with its scrollback. */
  screen(): string {
    return tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", this.name);
  }

  async waitFor(pattern: RegExp | string, timeout = 20_000): Promise<string> {
    await expect.poll(() => this.screen(), { timeout, interval: 50 }).toMatch(pattern);
    return this.screen();
  }

  /** Types `text` literally, then Enter. */
  type(text: string): void {
    tmux("send-keys", "-t", this.name, "-l", text);
    tmux("send-keys", "-t", this.name, "Enter");
  }

  resize(cols: number, rows: number): void {
    tmux("resize-window", "-t", this.name, "-x", String(cols), "-y", String(rows));
  }

  close(): void {
    try {
      tmux("kill-session", "-t", this.name);
    } catch {
      // Already gone.
    }
  }
}
