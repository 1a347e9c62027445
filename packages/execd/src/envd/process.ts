import { WarmShell } from "../commands/warm-shell.js";
import type { Environment } from "../environment.js";
import type { Route } from "../http/router.js";
import {
  type CallContext,
  ConnectError,
  connectRoutes,
  keepaliveMs,
  type Message,
  timeoutOf,
} from "./connect.js";
import type { Watcher } from "./process-feed.js";
import type { StartRequest } from "./process-messages.js";
import {
  inputOf,
  keepaliveEvent,
  type Selector,
  selectorOf,
  signalOf,
  startEvent,
  startRequestOf,
  updateSizeOf,
} from "./process-messages.js";
import { RunningProcess } from "./process-running.js";
import { type RunAs, runAs, workingDirectory } from "./process-user.js";

/** How long SendSignal(SIGKILL) waits for the process to be gone, so a `list()` after it agrees. */
const killSettleMs = 2000;

/**
 * envd's `process.Process` service over Connect: processes keyed by pid (and an optional tag),
 * started by Start and watched by Start's and Connect's streams.
 *
 * Lifetimes, as envd has them: a process outlives the streams that watch it (a client that
 * goes away, or disconnects a background command, leaves it running); what it prints while
 * nobody watches is dropped, not replayed to a later Connect. A Start call's deadline
 * (`Connect-Timeout-Ms`, the SDK's `timeoutMs`, 60 s by default, none for 0) is the process's
 * own: when it passes the process is killed (SIGKILL to its group) as well as the stream ended
 * with `deadline_exceeded`. A Connect call's deadline ends only its stream.
 */
export class EnvdProcesses {
  private readonly processes = new Map<number, RunningProcess>();
  /**
   * A login shell started ahead of time for E2B's `commands.run` (see `warmCommand`) by calls
   * that name no user, as the sandbox's default user; made on the first such call, once that
   * user is known.
   */
  private warm: WarmShell | undefined;
  private closed = false;

  constructor(readonly env: Environment) {}

  routes(prefix: string): Route[] {
    return connectRoutes(prefix, "process.Process", {
      unary: {
        List: () => this.list(),
        SendInput: (request) => this.sendInput(request),
        SendSignal: (request) => this.sendSignal(request),
        Update: (request) => this.update(request),
        CloseStdin: (request) => {
          this.find(selectorOf(request)).closeStdin();
          return {};
        },
      },
      stream: {
        Start: (request, context, send) => this.start(request, context, send),
        Connect: (request, context, send) => {
          const running = this.find(selectorOf(request));
          return this.stream(running.pid, running.feed.watch(), context, send);
        },
        // Client streaming needs a request body that streams both ways, which the SDK's fetch
        // transport cannot send over HTTP/1.1; it sends input with SendInput instead.
        StreamInput: async () => {
          throw new ConnectError("unimplemented", "StreamInput is not served: send input with SendInput");
        },
      },
    });
  }

  /** How many processes started through Start are running (a warm shell not yet taken is not). */
  runningCount(): number {
    return this.processes.size;
  }

  /** Kills every process (execd shutting down). */
  closeAll(): void {
    this.closed = true;
    this.warm?.close();
    for (const running of this.processes.values()) running.signal("SIGKILL");
  }

  private list(): Message {
    return {
      processes: [...this.processes.values()].map((running) => ({
        config: running.config,
        pid: running.pid,
        ...(running.tag !== undefined ? { tag: running.tag } : {}),
      })),
    };
  }

  private async start(
    message: Message,
    context: CallContext,
    send: (message: Message) => Promise<void>,
  ): Promise<void> {
    const request = startRequestOf(message);
    const user = await runAs(context.user);
    const cwd = workingDirectory(request.process.cwd, user.home);
    const warmShell = context.user ? undefined : this.warmShellFor(user);
    const command = warmShell ? warmCommand(request) : undefined;
    const warm = command === undefined ? undefined : warmShell?.take(command, cwd, {});
    const { running, watcher } = await RunningProcess.start(
      {
        request,
        cwd,
        env: this.env.forProcess({ ...user.env, ...request.process.envs }),
        ...(user.uid !== undefined ? { uid: user.uid, gid: user.gid } : {}),
        ...(warm ? { warm } : {}),
      },
      (ended) => {
        if (this.processes.get(ended.pid) === ended) this.processes.delete(ended.pid);
        // The next warm shell starts once this command is done, not beside it.
        if (command !== undefined) warmShell?.refill();
      },
    );
    this.processes.set(running.pid, running);
    const timeoutMs = timeoutOf(context.headers);
    if (timeoutMs !== undefined) running.killAfter(timeoutMs);
    await this.stream(running.pid, watcher, context, send);
  }

  /** The warm shell of calls that name no user, who run as `user` (the sandbox's default). */
  private warmShellFor(user: RunAs): WarmShell | undefined {
    if (this.closed) return undefined;
    this.warm ??= new WarmShell(loginShell, this.env, {
      login: true,
      ...(user.uid !== undefined
        ? { user: { uid: user.uid, gid: user.gid ?? user.uid, env: user.env } }
        : {}),
    });
    return this.warm;
  }

  /** A process's events on one stream: its start, then what it does until its end. */
  private async stream(
    pid: number,
    watcher: Watcher,
    context: CallContext,
    send: (message: Message) => Promise<void>,
  ): Promise<void> {
    const keepalive = setInterval(() => watcher.push(keepaliveEvent), keepaliveMs(context.headers));
    try {
      await send(startEvent(pid));
      for (let event = await watcher.next(context.signal); event; event = await watcher.next(context.signal))
        await send(event);
    } finally {
      clearInterval(keepalive);
      watcher.close();
    }
  }

  /** Each request is read whole before its process is looked up: a malformed one is refused as such. */
  private async sendInput(request: Message): Promise<Message> {
    const selector = selectorOf(request);
    const input = inputOf(request);
    await this.find(selector).write(input);
    return {};
  }

  private async sendSignal(request: Message): Promise<Message> {
    const selector = selectorOf(request);
    const signal = signalOf(request);
    const running = this.find(selector);
    running.signal(signal);
    if (signal === "SIGKILL") await running.settled(killSettleMs);
    return {};
  }

  private update(request: Message): Message {
    const selector = selectorOf(request);
    const size = updateSizeOf(request);
    const running = this.find(selector);
    if (size) running.resize(size);
    return {};
  }

  private find(selector: Selector): RunningProcess {
    if ("pid" in selector) {
      const running = this.processes.get(selector.pid);
      if (running) return running;
      throw new ConnectError("not_found", `process with pid ${selector.pid} not found`);
    }
    for (const running of this.processes.values()) if (running.tag === selector.tag) return running;
    throw new ConnectError("not_found", `process with tag ${selector.tag} not found`);
  }
}

const loginShell = "/bin/bash";

/**
 * The command of a Start a warm login shell can run exactly as asked: `/bin/bash -l -c <command>`
 * (what E2B's `commands.run` sends) with no pty, no stdin and no variables of its own (a profile
 * read ahead of time could not have seen them).
 */
function warmCommand(request: StartRequest): string | undefined {
  const { cmd, args, envs } = request.process;
  const [login, dashC, command] = args;
  if (cmd !== loginShell || args.length !== 3 || login !== "-l" || dashC !== "-c") return undefined;
  if (request.pty || request.stdin || Object.keys(envs).length > 0) return undefined;
  return command;
}
