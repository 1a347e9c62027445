import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
import type { Environment } from "../environment.js";

/**
 * What a warm shell runs while it waits: two fields on fd 3 (setup, then the command), each a
 * ten-digit byte count and that many bytes, read with `read -u 3 -N` (counted in bytes under
 * LC_ALL=C): one system call per read, where a space-ended count is read byte by byte and a
 * `<&3` redirection costs a dozen calls around each read; under gVisor each call is tens of
 * microseconds (decision 0100). The setup (cd, exports) is code this module writes; the command
 * is evaluated on its own so that its syntax errors stay its own. fd 3 is closed before either
 * runs; stdin is /dev/null as for any command. A shell whose fd 3 closes without a command
 * (execd gone) exits.
 */
const bootstrap = [
  "IFS= read -u 3 -r -N 10 __paddock_n || exit 125",
  'LC_ALL=C IFS= read -u 3 -r -N "$((10#$__paddock_n))" __paddock_setup',
  "IFS= read -u 3 -r -N 10 __paddock_n || exit 125",
  'LC_ALL=C IFS= read -u 3 -r -N "$((10#$__paddock_n))" __paddock_command',
  "exec 3<&-",
  'eval "$__paddock_setup"',
  "unset __paddock_n __paddock_setup",
  'eval "$__paddock_command"',
].join("\n");

/**
 * Names a warm shell can export exactly as `bash -c` would have received them: identifiers
 * bash gives no meaning of its own (a readonly or special variable behaves differently when
 * exported into a running shell than when inherited at start).
 */
const plainName = /^[A-Za-z_][A-Za-z0-9_]*$/;
const shellOwned =
  /^(BASH.*|SHELLOPTS|IFS|EUID|UID|PPID|SHLVL|PWD|OLDPWD|GROUPS|FUNCNAME|RANDOM|SRANDOM|SECONDS|LINENO|HISTCMD|DIRSTACK|PIPESTATUS|EPOCHSECONDS|EPOCHREALTIME|POSIXLY_CORRECT|ENV|PS4|COMP_.*|LC_.*|LANG)$/;

interface Idle {
  child: ChildProcess;
  /** The Environment revision it was started with: a later `/env` change makes it stale. */
  revision: number;
  alive: boolean;
}

/**
 * One shell started ahead of time (for the default user), so a command does not wait for a
 * fork/exec of bash — slow under gVisor. A command takes it when it is idle and its request
 * fits (no uid/gid, plain env names); otherwise, or when it is in use, the command starts a
 * shell of its own. The next one is started after the taker is done, off the request's path.
 */
export class WarmShell {
  private idle: Idle | undefined;
  private closed: boolean;

  /**
   * `login`: a login shell (`bash -l`, as E2B's commands run), its profile read while it waits:
   * that is most of such a command's start under gVisor. `user`: the account it runs as, with
   * that account's variables (HOME, USER, LOGNAME), when not execd's own.
   */
  constructor(
    private readonly shell: string,
    private readonly env: Environment,
    private readonly options: {
      login?: boolean;
      user?: { uid: number; gid: number; env: Record<string, string> };
    } = {},
  ) {
    // The bootstrap needs bash's `read -N`; an image with only /bin/sh starts every command cold.
    this.closed = !shell.endsWith("/bash");
  }

  /**
   * The idle shell running `command` in `cwd` with `envs` on top of the environment, or
   * undefined when it cannot serve this request as a fresh `bash -c` would.
   */
  take(command: string, cwd: string, envs: Record<string, string> | undefined): ChildProcess | undefined {
    const idle = this.idle;
    if (!idle) return undefined;
    if (!idle.alive || idle.revision !== this.env.revision) {
      this.discard();
      return undefined;
    }
    const names = Object.keys(envs ?? {});
    if (!names.every((name) => plainName.test(name) && !shellOwned.test(name))) return undefined;
    if (command.includes("\0") || cwd.includes("\0")) return undefined;
    this.idle = undefined;
    const setup = [
      `cd -- ${quote(cwd)} || exit 127`,
      ...names.map((name) => `export ${quote(`${name}=${envs?.[name]}`)}`),
      "",
    ].join("\n");
    const control = idle.child.stdio[3] as Writable;
    control.end(`${field(setup)}${field(command)}`);
    return idle.child;
  }

  /** Starts the next idle shell unless one is ready (cheap to call often). */
  refill(): void {
    if (this.closed || this.idle) return;
    const user = this.options.user;
    const child = spawn(this.shell, [...(this.options.login ? ["-l"] : []), "-c", bootstrap], {
      cwd: "/",
      env: this.env.forProcess(user?.env),
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      detached: true,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    const idle: Idle = { child, revision: this.env.revision, alive: true };
    const dead = () => {
      idle.alive = false;
      if (this.idle === idle) this.idle = undefined;
    };
    child.on("error", dead);
    child.on("exit", dead);
    // A shell that lost its execd before taking a command has nothing to say.
    (child.stdio[3] as Writable).on("error", dead);
    this.idle = idle;
  }

  /** Stops the idle shell (execd shutting down, or its environment went stale). */
  close(): void {
    this.closed = true;
    this.discard();
  }

  private discard(): void {
    const idle = this.idle;
    this.idle = undefined;
    if (idle?.alive) idle.child.kill("SIGKILL");
  }
}

/** A field as the bootstrap reads it: its byte count in ten digits, then its bytes. */
function field(text: string): string {
  return `${String(Buffer.byteLength(text)).padStart(10, "0")}${text}`;
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
