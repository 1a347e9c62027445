import { isRecord } from "../json.js";
import { ConnectError, type Message } from "./connect.js";

/**
 * The messages of envd's `process.Process` service in protobuf's JSON mapping: requests read
 * leniently where the mapping allows (null as absent, numbers as numbers or strings, unknown
 * fields ignored as connect-go does), and refused with `invalid_argument` where they make no sense.
 */

export interface PtySize {
  cols: number;
  rows: number;
}

/** What a process was started with, as `List` reports it back. */
export interface ProcessConfig {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd?: string;
}

export interface StartRequest {
  process: ProcessConfig;
  pty?: PtySize;
  tag?: string;
  stdin: boolean;
}

export type Selector = { pid: number } | { tag: string };
export type Input = { stdin: Buffer } | { pty: Buffer };
export type SignalName = "SIGKILL" | "SIGTERM";

/** The outcome of a process as the SDK reads it: Go's `os.ProcessState`, which envd reports. */
export interface EndEvent {
  exitCode: number;
  exited: boolean;
  status: string;
  error?: string;
}

/** paddock-pty's bounds on a terminal's size. */
const maxTerminalSide = 10_000;
const defaultSize: PtySize = { cols: 80, rows: 24 };

const invalid = (message: string) => new ConnectError("invalid_argument", message);

/** A field's value, with JSON null read as absent (protobuf's JSON mapping says so). */
function present(message: Message, name: string): unknown {
  const value = message[name];
  return value === null ? undefined : value;
}

function messageField(message: Message, name: string, path: string): Message | undefined {
  const value = present(message, name);
  if (value === undefined) return undefined;
  if (!isRecord(value)) throw invalid(`${path} must be a message (a JSON object)`);
  return value;
}

function stringField(message: Message, name: string, path: string): string | undefined {
  const value = present(message, name);
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(`${path} must be a string`);
  return value;
}

function boolField(message: Message, name: string, path: string): boolean | undefined {
  const value = present(message, name);
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw invalid(`${path} must be a boolean`);
  return value;
}

/** A uint32: a JSON number, or a decimal string as the mapping also allows. */
function uint32Field(message: Message, name: string, path: string): number | undefined {
  const value = present(message, name);
  if (value === undefined) return undefined;
  const number = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 0 || number > 0xffff_ffff)
    throw invalid(`${path} must be an unsigned 32-bit integer`);
  return number;
}

/** `bytes`: base64, standard or URL-safe, padded or not. */
function bytesField(message: Message, name: string, path: string): Buffer | undefined {
  const value = present(message, name);
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value))
    throw invalid(`${path} must be base64-encoded bytes`);
  return Buffer.from(value, "base64");
}

function processConfigOf(message: Message): ProcessConfig {
  const cmd = stringField(message, "cmd", "process.cmd");
  if (!cmd) throw invalid("process.cmd is required");
  if (cmd.includes("\0")) throw invalid("process.cmd cannot contain a NUL byte");
  const rawArgs = present(message, "args") ?? [];
  if (!Array.isArray(rawArgs) || !rawArgs.every((arg) => typeof arg === "string"))
    throw invalid("process.args must be a list of strings");
  if (rawArgs.some((arg) => arg.includes("\0"))) throw invalid("process.args cannot contain a NUL byte");
  const rawEnvs = present(message, "envs") ?? {};
  if (!isRecord(rawEnvs) || !Object.values(rawEnvs).every((value) => typeof value === "string"))
    throw invalid("process.envs must map names to strings");
  const envs = rawEnvs as Record<string, string>;
  if (
    Object.entries(envs).some(
      ([name, value]) => !name || name.includes("=") || `${name}${value}`.includes("\0"),
    )
  )
    throw invalid(
      "process.envs names must be non-empty without '=', and no name or value may hold a NUL byte",
    );
  const cwd = stringField(message, "cwd", "process.cwd");
  return { cmd, args: rawArgs, envs, ...(cwd ? { cwd } : {}) };
}

function sizeOf(pty: Message, path: string): PtySize {
  const size = messageField(pty, "size", `${path}.size`);
  if (!size) return defaultSize;
  const cols = uint32Field(size, "cols", `${path}.size.cols`) ?? 0;
  const rows = uint32Field(size, "rows", `${path}.size.rows`) ?? 0;
  if (cols < 1 || rows < 1 || cols > maxTerminalSide || rows > maxTerminalSide)
    throw invalid(`${path}.size needs cols and rows from 1 to ${maxTerminalSide}`);
  return { cols, rows };
}

export function startRequestOf(message: Message): StartRequest {
  const process = messageField(message, "process", "process");
  if (!process) throw invalid("process is required");
  const pty = messageField(message, "pty", "pty");
  const tag = stringField(message, "tag", "tag");
  return {
    process: processConfigOf(process),
    ...(pty ? { pty: sizeOf(pty, "pty") } : {}),
    ...(tag !== undefined ? { tag } : {}),
    // The proto's comment: absent means true, for SDKs older than the field.
    stdin: boolField(message, "stdin", "stdin") ?? true,
  };
}

/** The `process` selector every call but Start and List carries. */
export function selectorOf(message: Message): Selector {
  const selector = messageField(message, "process", "process");
  const pid = selector && uint32Field(selector, "pid", "process.pid");
  const tag = selector && stringField(selector, "tag", "process.tag");
  if (pid !== undefined && tag !== undefined) throw invalid("process selects by pid or by tag, not both");
  if (pid !== undefined) return { pid };
  if (tag !== undefined) return { tag };
  throw invalid("process must select a process by pid or tag");
}

export function inputOf(message: Message): Input {
  const input = messageField(message, "input", "input");
  const stdin = input && bytesField(input, "stdin", "input.stdin");
  const pty = input && bytesField(input, "pty", "input.pty");
  if (stdin && pty) throw invalid("input carries stdin or pty bytes, not both");
  if (stdin) return { stdin };
  if (pty) return { pty };
  throw invalid("input must carry stdin or pty bytes");
}

/** `Signal`: its enum name, or its number as the mapping also allows. */
export function signalOf(message: Message): SignalName {
  const value = present(message, "signal");
  if (value === "SIGNAL_SIGKILL" || value === 9) return "SIGKILL";
  if (value === "SIGNAL_SIGTERM" || value === 15) return "SIGTERM";
  throw invalid("signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM");
}

/** Update's new terminal size; undefined when the request changes nothing. */
export function updateSizeOf(message: Message): PtySize | undefined {
  const pty = messageField(message, "pty", "pty");
  if (!pty) return undefined;
  if (!messageField(pty, "size", "pty.size")) throw invalid("pty.size is required to resize a terminal");
  return sizeOf(pty, "pty");
}

export const startEvent = (pid: number): Message => ({ event: { start: { pid } } });
export const dataEvent = (stream: "stdout" | "stderr" | "pty", bytes: Buffer): Message => ({
  event: { data: { [stream]: bytes.toString("base64") } },
});
export const endEvent = (end: EndEvent): Message => ({ event: { end } });
export const keepaliveEvent: Message = { event: { keepalive: {} } };

/** Go's names of the signals (`syscall.Signal.String()`), which envd's status strings carry. */
const goSignalNames: Partial<Record<NodeJS.Signals, string>> = {
  SIGHUP: "hangup",
  SIGINT: "interrupt",
  SIGQUIT: "quit",
  SIGILL: "illegal instruction",
  SIGABRT: "aborted",
  SIGBUS: "bus error",
  SIGFPE: "floating point exception",
  SIGKILL: "killed",
  SIGUSR1: "user defined signal 1",
  SIGSEGV: "segmentation fault",
  SIGUSR2: "user defined signal 2",
  SIGPIPE: "broken pipe",
  SIGALRM: "alarm clock",
  SIGTERM: "terminated",
};

/**
 * The end of a process as envd words it: an exit is `exit status N` (an error unless N is 0); a
 * death by signal is exit code -1, not `exited`, and `signal: killed` and the like.
 */
export function endOf(code: number | null, signal: NodeJS.Signals | null): EndEvent {
  if (code !== null) {
    const status = `exit status ${code}`;
    return { exitCode: code, exited: true, status, ...(code !== 0 ? { error: status } : {}) };
  }
  const status = `signal: ${(signal && goSignalNames[signal]) ?? signal?.toLowerCase() ?? "unknown"}`;
  return { exitCode: -1, exited: false, status, error: status };
}
