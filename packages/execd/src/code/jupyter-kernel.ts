/**
 * One IPython kernel (ipykernel) per Python context: started with a generated connection file,
 * spoken to over ZeroMQ (shell and control as DEALER, iopub as SUB), shut down on delete.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deserialize, type JupyterMessage, newMessage, serialize } from "./jupyter-wire.js";
import { ZmtpSocket } from "./zmtp.js";

const HOST = "127.0.0.1";
/** ipykernel takes a second or two to start, several under gVisor on shared cores. */
const READY_TIMEOUT_MS = 60_000;
/** How long a kernel asked to shut down may take before it is killed. */
const SHUTDOWN_GRACE_MS = 2_000;
/** Output published after execute_reply is flushed right away; this only guards a lost idle. */
const IDLE_AFTER_REPLY_MS = 5_000;
/** The kernel's own stdout/stderr (not the cells'): the tail is kept to explain a failed start. */
const LOG_TAIL_BYTES = 4096;

/** Where kernelspecs live on Debian and in pip installs. */
const KERNELSPEC_PATHS = [
  "/usr/local/share/jupyter/kernels/python3/kernel.json",
  "/usr/share/jupyter/kernels/python3/kernel.json",
];

export type InterruptMode = "signal" | "message";

export interface KernelSupport {
  interruptMode: InterruptMode;
}

/**
 * Whether `python` can run ipykernel (found, not imported: that is quick), and how the
 * python3 kernelspec wants to be interrupted (`signal` unless it says `message`).
 */
export function detectKernelSupport(
  python: string,
  env: Record<string, string>,
): Promise<KernelSupport | undefined> {
  return new Promise((resolve) => {
    execFile(
      python,
      [
        "-c",
        "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('ipykernel_launcher') else 1)",
      ],
      { env, timeout: 30_000 },
      (error) => resolve(error ? undefined : { interruptMode: interruptModeFromSpec(KERNELSPEC_PATHS) }),
    );
  });
}

/** The first readable kernelspec's `interrupt_mode`: `message` if it says so, else `signal`. */
export function interruptModeFromSpec(paths: string[]): InterruptMode {
  for (const path of paths) {
    try {
      const spec = JSON.parse(readFileSync(path, "utf8")) as { interrupt_mode?: string };
      return spec.interrupt_mode === "message" ? "message" : "signal";
    } catch {
      // Not there or not JSON: try the next place.
    }
  }
  return "signal";
}

/** Ports free on 127.0.0.1 now; all held open together so they differ. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import("node:net").Server>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, HOST, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as import("node:net").AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** execute_reply's content: status `ok`, `error` (with ename, evalue, traceback) or `aborted`. */
export interface ExecuteReply {
  status: "ok" | "error" | "aborted";
  [field: string]: unknown;
}

interface PendingExecute {
  onOutput: (message: JupyterMessage) => void;
  reply?: ExecuteReply;
  idle: boolean;
  idleTimer?: NodeJS.Timeout;
  resolve: (reply: ExecuteReply) => void;
  reject: (error: Error) => void;
}

export class KernelDiedError extends Error {}

export class JupyterKernel {
  private readonly session = randomUUID();
  private shell?: ZmtpSocket;
  private control?: ZmtpSocket;
  private iopub?: ZmtpSocket;
  /** Replies on shell or control awaited by request id. */
  private readonly replies = new Map<string, (message: JupyterMessage) => void>();
  private readonly executions = new Map<string, PendingExecute>();
  private iopubHeard = false;
  private outputPaused = false;
  private exited = false;
  private killed = false;
  private exitReason = "";
  private readonly exitListeners: ((reason: string) => void)[] = [];
  private logTail = "";

  private constructor(
    private readonly child: ChildProcess,
    private readonly key: string,
    private readonly directory: string,
    private readonly interruptMode: InterruptMode,
  ) {
    for (const stream of [child.stdout, child.stderr])
      stream?.on("data", (chunk: Buffer) => {
        this.logTail = (this.logTail + chunk.toString("utf8")).slice(-LOG_TAIL_BYTES);
      });
    child.on("error", (error) => this.onExit(`the kernel could not start: ${error.message}`));
    child.on("exit", (code, signal) =>
      this.onExit(`the kernel exited (${signal ? `signal ${signal}` : `exit code ${code}`})`),
    );
  }

  /** Starts `python -m ipykernel_launcher -f <connection file>` and waits until it answers. */
  static async start(options: {
    python: string;
    env: Record<string, string>;
    cwd: string;
    interruptMode: InterruptMode;
  }): Promise<JupyterKernel> {
    const [shell, iopub, stdin, control, hb] = (await freePorts(5)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const key = randomBytes(32).toString("hex");
    const directory = mkdtempSync(join(tmpdir(), "paddock-kernel-"));
    const connectionFile = join(directory, "connection.json");
    writeFileSync(
      connectionFile,
      JSON.stringify({
        transport: "tcp",
        ip: HOST,
        shell_port: shell,
        iopub_port: iopub,
        stdin_port: stdin,
        control_port: control,
        hb_port: hb,
        key,
        signature_scheme: "hmac-sha256",
        kernel_name: "python3",
      }),
      { mode: 0o600 },
    );
    const child = spawn(options.python, ["-m", "ipykernel_launcher", "-f", connectionFile], {
      env: options.env,
      cwd: options.cwd,
      // Its own process group: a signal-mode interrupt reaches the cell's subprocesses too.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const kernel = new JupyterKernel(child, key, directory, options.interruptMode);
    try {
      await kernel.connect({ shell, iopub, control });
      return kernel;
    } catch (error) {
      const reason = kernel.exited ? kernel.exitReason : (error as Error).message;
      kernel.kill();
      const log = kernel.logTail.trim();
      throw new Error(log ? `${reason}: ${log}` : reason);
    }
  }

  onceExit(listener: (reason: string) => void): void {
    if (this.exited) listener(this.exitReason);
    else this.exitListeners.push(listener);
  }

  /**
   * Runs a cell; every iopub message answering it goes to `onOutput`. Resolves once the
   * kernel has replied and gone idle (so all the cell's output was delivered). A silent cell
   * (set-up a caller runs around the user's cells) counts no execution and keeps no history.
   */
  execute(code: string, onOutput: (message: JupyterMessage) => void, silent = false): Promise<ExecuteReply> {
    if (this.exited) return Promise.reject(new KernelDiedError(this.exitReason));
    const request = newMessage("execute_request", this.session, {
      code,
      silent,
      store_history: !silent,
      user_expressions: {},
      allow_stdin: false,
      // execd sends a context one cell at a time, so there is never a queue to abort; with
      // stop_on_error, ipykernel would also abort the next cell if it came within its abort window.
      stop_on_error: false,
    });
    return new Promise((resolve, reject) => {
      const id = request.header.msg_id;
      const pending: PendingExecute = { onOutput, idle: false, resolve, reject };
      this.executions.set(id, pending);
      this.replies.set(id, (reply) => {
        this.replies.delete(id);
        pending.reply = reply.content as unknown as ExecuteReply;
        if (pending.idle) this.settle(id);
        else this.settleUnlessIdleComes(id, pending);
      });
      this.shell?.send(serialize(request, this.key));
    });
  }

  /**
   * The reading of the kernel's output (iopub), paused while the client of a cell is behind.
   * The cell's output then waits in the kernel's queue, which drops what passes its limit.
   */
  readonly output = {
    pause: () => {
      this.outputPaused = true;
      this.iopub?.pause();
    },
    resume: () => {
      this.outputPaused = false;
      this.iopub?.resume();
    },
  };

  /** Settles a replied cell whose idle is lost; not while its output is held back unread. */
  private settleUnlessIdleComes(id: string, pending: PendingExecute): void {
    pending.idleTimer = setTimeout(() => {
      if (this.outputPaused) this.settleUnlessIdleComes(id, pending);
      else this.settle(id);
    }, IDLE_AFTER_REPLY_MS);
  }

  /** Interrupts the running cell the way the kernelspec asks; the kernel and its state live on. */
  interrupt(): void {
    if (this.exited) return;
    if (this.interruptMode === "message") {
      this.control?.send(serialize(newMessage("interrupt_request", this.session, {}), this.key));
      return;
    }
    this.signal("SIGINT");
  }

  /** Asks the kernel to shut down, kills it if it lingers, removes its connection file. */
  async shutdown(): Promise<void> {
    if (!this.exited && !this.killed) {
      this.control?.send(
        serialize(newMessage("shutdown_request", this.session, { restart: false }), this.key),
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SHUTDOWN_GRACE_MS);
        this.onceExit(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.kill();
  }

  /** Kills the kernel's whole process group at once (also on execd's own shutdown). */
  kill(): void {
    this.killed = true;
    this.signal("SIGKILL");
    for (const socket of [this.shell, this.control, this.iopub]) socket?.close();
    rmSync(this.directory, { recursive: true, force: true });
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  }

  private async connect(ports: { shell: number; iopub: number; control: number }): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    this.iopub = await this.connectSocket(ports.iopub, "SUB", deadline);
    this.iopub.subscribe();
    this.iopub.on("message", (frames) => this.onIopub(frames));
    this.shell = await this.connectSocket(ports.shell, "DEALER", deadline);
    this.control = await this.connectSocket(ports.control, "DEALER", deadline);
    for (const socket of [this.shell, this.control]) socket.on("message", (frames) => this.onReply(frames));
    // Ready when kernel_info is answered and iopub has spoken (a subscription takes effect a
    // moment after connecting; until then the kernel's busy/idle would be lost).
    while (!this.iopubHeard) {
      if (this.exited) throw new Error(this.exitReason);
      if (Date.now() > deadline) throw new Error("the kernel did not become ready in time");
      await this.request(this.shell, "kernel_info_request", 1000).catch(() => undefined);
      if (!this.iopubHeard) await sleep(100);
    }
  }

  /** The kernel binds its ports a moment after it starts: retry refused connections. */
  private async connectSocket(port: number, type: "DEALER" | "SUB", deadline: number): Promise<ZmtpSocket> {
    for (;;) {
      if (this.exited) throw new Error(this.exitReason);
      try {
        return await ZmtpSocket.connect({
          host: HOST,
          port,
          type,
          ...(type === "DEALER" ? { identity: Buffer.from(randomUUID()) } : {}),
          timeoutMs: Math.max(1000, deadline - Date.now()),
        });
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }

  private request(socket: ZmtpSocket, msgType: string, timeoutMs: number): Promise<JupyterMessage> {
    const message = newMessage(msgType, this.session, {});
    const id = message.header.msg_id;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.replies.delete(id);
        reject(new Error(`no ${msgType} reply in ${timeoutMs} ms`));
      }, timeoutMs);
      this.replies.set(id, (reply) => {
        clearTimeout(timer);
        this.replies.delete(id);
        resolve(reply);
      });
      socket.send(serialize(message, this.key));
    });
  }

  private onReply(frames: Buffer[]): void {
    const message = this.parse(frames);
    const parent = message?.parent_header.msg_id;
    if (parent) this.replies.get(parent)?.(message);
  }

  private onIopub(frames: Buffer[]): void {
    const message = this.parse(frames);
    if (!message) return;
    this.iopubHeard = true;
    const parent = message.parent_header.msg_id;
    const pending = parent ? this.executions.get(parent) : undefined;
    if (!pending || !parent) return;
    if (message.header.msg_type === "status") {
      if (message.content.execution_state === "idle") {
        pending.idle = true;
        if (pending.reply) this.settle(parent);
      }
      return;
    }
    pending.onOutput(message);
  }

  /** A message with a bad signature or shape is dropped, as the protocol asks. */
  private parse(frames: Buffer[]): JupyterMessage | undefined {
    try {
      return deserialize(frames, this.key);
    } catch {
      return undefined;
    }
  }

  private settle(id: string): void {
    const pending = this.executions.get(id);
    if (!pending?.reply) return;
    clearTimeout(pending.idleTimer);
    this.executions.delete(id);
    pending.resolve(pending.reply);
  }

  private onExit(reason: string): void {
    if (this.exited) return;
    this.exited = true;
    this.exitReason = reason;
    for (const [id, pending] of this.executions) {
      clearTimeout(pending.idleTimer);
      this.executions.delete(id);
      pending.reject(new KernelDiedError(reason));
    }
    for (const socket of [this.shell, this.control, this.iopub]) socket?.close();
    rmSync(this.directory, { recursive: true, force: true });
    for (const listener of this.exitListeners.splice(0)) listener(reason);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
