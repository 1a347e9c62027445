import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, readdir, realpath, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { EXECD_TOKEN_ENV, execdEntrypoint, stashNodeVariables } from "@paddock/common/contracts";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import type { Environment } from "../environment.js";
import {
  type AgentAddress,
  agentJson,
  agentRunning,
  ISOLATED_AGENT_PRIVATE_PROC_ENV,
  ISOLATED_AGENT_SOCKET_ENV,
} from "./agent.js";
import {
  busybox,
  type IsolationFeature,
  type IsolationSupport,
  probeIsolation,
  sessionsRoot,
  unshare,
} from "./capabilities.js";
import type { OverlayViews } from "./changes.js";
import type { SessionSpec } from "./spec.js";

export type SessionStatus = "active" | "dead";

export interface IsolatedSession {
  id: string;
  spec: SessionSpec;
  createdAt: string;
  lastRunAt: string;
  status: SessionStatus;
  /** The `unshare` process: it lives in the session's user and mount namespaces. */
  holder: ChildProcess;
  dir: string;
  agent: AgentAddress;
  idleTimer?: NodeJS.Timeout;
  /** Background runs started through the session, for idle collection. */
  backgroundRuns: Set<string>;
  /** The agent's bash session that foreground runs share, once opened. */
  shell?: string;
  /**
   * Device and inode of the session's private tmpfs, as its processes see it at `dir`: every
   * process whose root shows it there lives in the session's mount namespace or one made from it.
   */
  mark?: { dev: number; ino: number };
}

/**
 * The only sources binds and `extra_writable` may take (after symlinks are resolved), and their
 * subpaths, as OpenSandbox's default `allowed_writable`: a session cannot bring the sandbox's
 * system directories (`/etc`, `/root`, ...) into its namespace writable or under another name.
 */
export const bindableRoots = ["/workspace", "/mnt", "/media", "/data"];

/** How long a new session's agent may take to answer. */
const startTimeoutMs = 20_000;

/**
 * Builds the session's mounts inside its namespaces, then becomes the session's init. Arguments:
 * busybox, the session's directory, the workspace, its mode, the profile, the overlay's extra
 * options, how to make a path read-only (`remount` or `overlay`), then `source dest ro|rw` per
 * bind, `--` and the init.
 */
const sessionScript = [
  "set -e",
  'B="$1"; D="$2"; W="$3"; M="$4"; P="$5"; X="$6"; V="$7"; shift 7',
  '"$B" mount -t tmpfs -o mode=0700 tmpfs "$D"',
  '"$B" mkdir "$D/empty"; N=0',
  // Read-only: a remounted bind where the read-only flag gets locked, else (V=overlay) an overlay
  // without an upper directory, which has nowhere to write whatever its flags say.
  "readonly_dir() {",
  '  if [ "$V" = overlay ]; then "$B" mount -t overlay overlay -o "${X}lowerdir=$1:$D/empty" "$2"',
  '  else "$B" mount -o rbind "$1" "$2"; "$B" mount -o remount,bind,ro "$2"; fi',
  "}",
  "readonly_file() {",
  '  if [ "$V" = overlay ]; then N=$((N+1)); "$B" mkdir "$D/ro$N"',
  '    readonly_dir "$("$B" dirname "$1")" "$D/ro$N"; "$B" mount -o bind "$D/ro$N/$("$B" basename "$1")" "$2"',
  '  else "$B" mount -o bind "$1" "$2"; "$B" mount -o remount,bind,ro "$2"; fi',
  "}",
  'case "$M" in',
  '  overlay) "$B" mkdir "$D/upper" "$D/work"',
  '    "$B" mount -t overlay overlay -o "${X}lowerdir=$W,upperdir=$D/upper,workdir=$D/work" "$W" ;;',
  '  ro) readonly_dir "$W" "$W" ;;',
  "esac",
  // strict: a /tmp of the session's own (before the binds, so a bind under /tmp stays visible).
  'if [ "$P" = strict ]; then',
  '  case "$W" in /tmp|/tmp/*) ;; *) "$B" mount -t tmpfs -o mode=1777 tmpfs /tmp ;; esac',
  "fi",
  // Binds; a missing destination is made (a directory, or an empty file for a file).
  'while [ "$1" != -- ]; do',
  '  S="$1"; T="$2"; R="$3"; shift 3',
  '  if [ ! -e "$T" ]; then',
  '    if [ -d "$S" ]; then "$B" mkdir -p "$T"; else "$B" mkdir -p "$("$B" dirname "$T")"; : > "$T"; fi',
  "  fi",
  '  if [ "$R" = rw ]; then "$B" mount -o rbind "$S" "$T"',
  '  elif [ -d "$S" ]; then readonly_dir "$S" "$T"',
  '  else readonly_file "$S" "$T"; fi',
  "done",
  "shift",
  // strict: the rest of the filesystem read-only; the workspace and binds are mounts of their own.
  'if [ "$P" = strict ]; then "$B" mount -o remount,bind,ro /; fi',
  // A fresh /proc where the runtime allows it; otherwise the sandbox's stays (see capabilities).
  '"$B" mount -t proc proc /proc 2>/dev/null || true',
  'exec "$@"',
].join("\n");

/** The sessions of this sandbox, each in its own namespaces with its own agent. */
export class IsolatedSessions {
  private readonly sessions = new Map<string, IsolatedSession>();
  private support: Promise<IsolationSupport> | undefined;
  /** The agents' count being taken, which concurrent askers share. */
  private counting: Promise<number> | undefined;

  constructor(private readonly env: Environment) {}

  /** What this runtime allows, probed once. */
  capabilities(): Promise<IsolationSupport> {
    this.support ??= probeIsolation();
    return this.support;
  }

  async create(spec: SessionSpec): Promise<IsolatedSession> {
    // Mounted from the resolved path: a symlink swapped after the check changes nothing.
    const mounted = await Promise.all(
      spec.binds.map(async (bind) => ({ ...bind, source: await checkBindSource(bind.source) })),
    );
    const { features, overlayOptions } = await this.capabilities();
    const needed: IsolationFeature = spec.workspace.mode === "overlay" ? "overlay" : "mount_namespace";
    if (!features[needed].available) {
      throw new PaddockError(
        ExecdErrors.isolationUnavailable,
        `isolated sessions are unavailable in this sandbox: ${features[needed].reason}`,
      );
    }
    if (!spec.share_net && !features.network_namespace.available) {
      throw new PaddockError(
        ExecdErrors.notSupported,
        `share_net: false is not supported here: ${features.network_namespace.reason}`,
      );
    }
    if (spec.binds.length > 0 && !features.binds.available)
      throw new PaddockError(
        ExecdErrors.notSupported,
        `binds are not supported here: ${features.binds.reason}`,
      );
    const workspace = await stat(spec.workspace.path).catch(() => undefined);
    if (!workspace?.isDirectory())
      throw new PaddockError(
        Errors.invalidRequest,
        `workspace.path ${spec.workspace.path} is not a directory`,
      );

    const id = randomUUID();
    const dir = join(sessionsRoot, id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const agent = { socketPath: "", token: randomBytes(24).toString("hex") };
    // The agent is execd again: the session's NODE_* variables must not reach its own Node.
    const environment = stashNodeVariables(passthrough(this.env.forProcess(), spec));
    environment[ISOLATED_AGENT_SOCKET_ENV] = join(dir, "agent.sock");
    environment[EXECD_TOKEN_ENV] = agent.token;
    if (features.private_proc.available) environment[ISOLATED_AGENT_PRIVATE_PROC_ENV] = "1";
    const [file, ...prefix] = unshare as [string, ...string[]];
    const holder = spawn(
      file,
      [
        ...prefix,
        "-r",
        "-m",
        "-p",
        "-f",
        // share_net: false: a network namespace of the session's own (gVisor gives it no network stack).
        ...(spec.share_net ? [] : ["-n"]),
        "--",
        busybox,
        "sh",
        "-c",
        sessionScript,
        "session",
        busybox,
        dir,
        spec.workspace.path,
        spec.workspace.mode,
        spec.profile ?? "balanced",
        overlayOptions,
        features.locked_read_only.available ? "remount" : "overlay",
        ...mounted.flatMap((bind) => [bind.source, bind.dest, bind.readonly ? "ro" : "rw"]),
        "--",
        // A nested user and mount namespace locks every mount the script made: the session
        // cannot unmount its overlay to reach the real workspace, nor remount a read-only path.
        ...(features.locked_mounts.available ? [...unshare, "-r", "-m", "--"] : []),
        ...agentCommand(),
      ],
      { detached: true, stdio: ["ignore", "ignore", "pipe"], env: environment },
    );
    let stderr = "";
    holder.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString();
    });
    const now = new Date().toISOString();
    const session: IsolatedSession = {
      id,
      spec,
      createdAt: now,
      lastRunAt: now,
      status: "active",
      holder,
      dir,
      agent,
      backgroundRuns: new Set(),
    };
    holder.on("exit", () => {
      session.status = "dead";
    });
    holder.on("error", (error) => {
      stderr += error.message;
      session.status = "dead";
    });
    // The holder shares the session's mount namespace: its root shows the session's mounts.
    agent.socketPath = `/proc/${holder.pid}/root${dir}/agent.sock`;
    try {
      await waitForAgent(session, () => stderr);
      // Read now: once the holder is gone (a dead session) its view of the tmpfs is too.
      session.mark = await readMark(session);
    } catch (error) {
      await this.destroy(session);
      throw error;
    }
    this.sessions.set(id, session);
    this.touch(session);
    return session;
  }

  /**
   * The session's shell: one bash in the agent whose working directory, variables and functions
   * carry over from run to run. Opened on first use, and again after it ended (`exit`, a
   * timeout), then in the workspace. Undefined when the image has no bash.
   */
  async shell(session: IsolatedSession): Promise<string | undefined> {
    if (session.shell) return session.shell;
    const { status, body } = await agentJson(session.agent, "POST", "/session", {
      cwd: session.spec.workspace.path,
    });
    if (status === 501) return undefined;
    const opened = (body as { session_id?: unknown }).session_id;
    if (status !== 200 || typeof opened !== "string")
      throw new PaddockError(
        ExecdErrors.agentFailed,
        `the session's agent did not open a shell: ${JSON.stringify(body)}`,
      );
    session.shell = opened;
    return opened;
  }

  list(): IsolatedSession[] {
    return [...this.sessions.values()];
  }

  /**
   * A session by id, or 404. `use` is a use of the session (a run, files, diff, commit): it
   * refuses a session whose processes are gone and restarts the idle window; reading its state
   * does neither.
   */
  get(id: string, options: { use?: boolean } = {}): IsolatedSession {
    const session = this.sessions.get(id);
    if (!session) throw new PaddockError(ExecdErrors.sessionNotFound, `no isolated session ${id}`);
    if (options.use) {
      if (session.status !== "active")
        throw new PaddockError(
          ExecdErrors.sessionDead,
          `isolated session ${id} has no processes left; delete it`,
        );
      this.touch(session);
    }
    return session;
  }

  async remove(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) throw new PaddockError(ExecdErrors.sessionNotFound, `no isolated session ${id}`);
    this.sessions.delete(id);
    await this.destroy(session);
  }

  /** The paths through which execd reads an overlay session's upper, lower and merged trees. */
  views(session: IsolatedSession): OverlayViews {
    if (session.spec.workspace.mode !== "overlay") {
      throw new PaddockError(
        ExecdErrors.notAnOverlay,
        `isolated session ${session.id} has a ${session.spec.workspace.mode} workspace: only overlay sessions have changes`,
      );
    }
    const root = `/proc/${session.holder.pid}/root`;
    return {
      upper: `${root}${session.dir}/upper`,
      lower: session.spec.workspace.path,
      merged: `${root}${session.spec.workspace.path}`,
    };
  }

  /** Seconds until the session is collected for idleness, or null without an idle timeout. */
  idleRemainingSeconds(session: IsolatedSession): number | null {
    const timeout = session.spec.idle_timeout_seconds;
    if (!timeout) return null;
    const idle = (Date.now() - Date.parse(session.lastRunAt)) / 1000;
    return Math.max(0, Math.round(timeout - idle));
  }

  /**
   * How many runs the sessions have going, as their agents count them (one question per live
   * session; askers meanwhile share its answer).
   */
  runningCount(): Promise<number> {
    this.counting ??= Promise.all(
      [...this.sessions.values()]
        .filter((session) => session.status === "active")
        .map((session) => agentRunning(session.agent)),
    )
      .then((counts) => counts.reduce((sum, count) => sum + count, 0))
      .finally(() => {
        this.counting = undefined;
      });
    return this.counting;
  }

  closeAll(): void {
    for (const session of this.sessions.values()) void this.destroy(session);
    this.sessions.clear();
  }

  /** Any use of a session restarts its idle window. */
  private touch(session: IsolatedSession): void {
    session.lastRunAt = new Date().toISOString();
    const timeout = session.spec.idle_timeout_seconds;
    if (!timeout) return;
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => void this.collectIdle(session), timeout * 1000);
    session.idleTimer.unref();
  }

  /** An idle session goes unless one of its background runs is still going. */
  private async collectIdle(session: IsolatedSession): Promise<void> {
    if (this.sessions.get(session.id) !== session) return;
    for (const runId of session.backgroundRuns) {
      const status = await agentJson(session.agent, "GET", `/command/status/${runId}`).catch(() => undefined);
      if ((status?.body as { running?: boolean } | undefined)?.running) {
        this.touch(session);
        return;
      }
    }
    this.sessions.delete(session.id);
    await this.destroy(session);
  }

  /**
   * Kills every process of the session. Killing its init is not enough: gVisor neither kills the
   * rest of a PID namespace when its init dies nor keeps the namespace's members from killing
   * their init, and hands the orphans to the sandbox's init. So every process that sees the
   * session's tmpfs is killed, round after round until none is left (a process forking meanwhile
   * is caught by the next round).
   */
  private async destroy(session: IsolatedSession): Promise<void> {
    clearTimeout(session.idleTimer);
    const exited = new Promise((resolve) => {
      if (session.holder.exitCode !== null || session.holder.signalCode !== null) resolve(undefined);
      else session.holder.once("exit", resolve);
    });
    session.mark ??= await readMark(session);
    signal(session.holder.pid === undefined ? [] : [-session.holder.pid]);
    if (session.mark) {
      const deadline = Date.now() + destroyTimeoutMs;
      for (;;) {
        const members = await sessionProcesses(session.dir, session.mark);
        if (members.length === 0 || Date.now() > deadline) break;
        signal(members);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    await exited;
    // The tmpfs with the upper directory went with the last process of the mount namespace.
    await rm(session.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** How long a deletion keeps hunting the session's processes (they die at the first SIGKILL). */
const destroyTimeoutMs = 10_000;

function signal(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/**
 * The session's tmpfs as the holder, which shares the session's mounts, sees it; undefined when
 * the holder is gone or the tmpfs is not mounted yet (the holder then sees execd's own directory,
 * which every process of the sandbox sees: matching it would kill them all).
 */
async function readMark(session: IsolatedSession): Promise<IsolatedSession["mark"]> {
  const [inside, outside] = await Promise.all([
    stat(`/proc/${session.holder.pid}/root${session.dir}`).catch(() => undefined),
    stat(session.dir).catch(() => undefined),
  ]);
  if (!inside || (outside && inside.dev === outside.dev && inside.ino === outside.ino)) return undefined;
  return { dev: inside.dev, ino: inside.ino };
}

/**
 * The live processes whose root shows the session's tmpfs at its directory. Zombies have no
 * root and are left to their reaper.
 */
async function sessionProcesses(dir: string, mark: { dev: number; ino: number }): Promise<number[]> {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name)).map(Number);
  const members: number[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      if (pid === process.pid) return;
      const seen = await stat(`/proc/${pid}/root${dir}`).catch(() => undefined);
      if (seen && seen.dev === mark.dev && seen.ino === mark.ino) members.push(pid);
    }),
  );
  return members;
}

/**
 * A bind source must exist and, symlinks resolved, lie under one of `bindableRoots`: else 400.
 * Answers the resolved path.
 */
async function checkBindSource(source: string): Promise<string> {
  const real = await realpath(source).catch(() => undefined);
  if (real === undefined)
    throw new PaddockError(Errors.invalidRequest, `bind source ${source} does not exist`);
  if (!bindableRoots.some((root) => real === root || real.startsWith(`${root}/`))) {
    const resolved = real === source ? "" : ` (${real})`;
    throw new PaddockError(
      ExecdErrors.bindNotAllowed,
      `bind source ${source}${resolved} is not allowed: sessions may bind only ${bindableRoots.join(", ")} and paths under them`,
    );
  }
  return real;
}

/** The agent is this same execd bundle, started by the session's init (tini reaps orphans). */
function agentCommand(): string[] {
  return execdEntrypoint(undefined, []);
}

/** execd's environment filtered by the session's env_passthrough. */
function passthrough(environment: Record<string, string>, spec: SessionSpec): Record<string, string> {
  const rule = spec.env_passthrough;
  if (!rule?.mode) return environment;
  const keys = new Set(rule.keys ?? []);
  const keep = (name: string) => (rule.mode === "allow" ? keys.has(name) : !keys.has(name));
  // PATH and HOME keep a shell usable whatever the rule says.
  return Object.fromEntries(
    Object.entries(environment).filter(([name]) => keep(name) || name === "PATH" || name === "HOME"),
  );
}

async function waitForAgent(session: IsolatedSession, stderr: () => string): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline) {
    if (session.status !== "active") {
      throw new PaddockError(
        ExecdErrors.isolationUnavailable,
        `the isolated session could not be set up: ${stderr().trim() || "its init exited"}`,
      );
    }
    const answer = await agentJson(session.agent, "GET", "/ping").catch(() => undefined);
    if (answer?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new PaddockError(
    ExecdErrors.isolationUnavailable,
    "the isolated session's agent did not start in time",
  );
}
