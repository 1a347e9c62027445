/**
 * Paddock's extensions of execd's wire, beyond the published definition (execd-api.yaml), typed
 * in the shape openapi-typescript gives that definition's paths so one client serves both.
 * Everything execd serves beyond the yaml is named here.
 */
import {
  EXECD_CODE_INTERPRETER_PREFIX,
  EXECD_DEFAULT_CODE_CONTEXT,
  EXECD_ENVD_PREFIX,
  EXECD_OUTPUT_FRAMING_HEADER,
} from "@paddock/common";
import type { components } from "./execd-api.gen.js";

type Json<T> = { content: { "application/json": T } };
type EventStream<T> = { content: { "text/event-stream": T } };
type Acknowledged = Json<Record<string, never>>;

/** A terminal to start: a login shell, or `command`, on a pseudo-terminal of `cols` × `rows`. */
export interface TerminalStart {
  cols?: number;
  rows?: number;
  command?: string;
  cwd?: string;
  uid?: number;
  gid?: number;
  envs?: Record<string, string>;
}

/** A terminal's stream: `init` names it (`text`), `output` carries base64 bytes, `exit` ends it. */
export interface TerminalEvent {
  type: "init" | "output" | "exit" | "error";
  text?: string;
  pid?: number;
  data?: string;
  exit_code?: number;
  error?: components["schemas"]["ServerStreamEvent"]["error"];
}

/** envd's `Metrics` (E2B's envd.yaml), which the E2B API reads for `getMetrics`. */
export interface EnvdMetrics {
  ts: number;
  cpu_count: number;
  cpu_used_pct: number;
  mem_total: number;
  mem_used: number;
  mem_total_mib: number;
  mem_used_mib: number;
  mem_cache?: number;
  disk_used: number;
  disk_total: number;
}

/**
 * `GET /activity`: how many things execd started are running now (commands, session runs, code
 * cells, terminals, isolated runs, envd processes; not its own warm shells), and how many requests
 * to it are in flight (streams and downloads included), the `/activity` and `/ping` ones aside.
 */
export interface ExecdActivity {
  running: number;
  requests: number;
}

/**
 * `/code`'s request as Paddock's execd takes it: a context may be named by its id alone (the
 * yaml's `CodeContext` wants its language too), and `EXECD_DEFAULT_CODE_CONTEXT` with a language
 * names the sandbox's default context of that language, which keeps its state between runs.
 */
export type RunCodeRequest = Omit<components["schemas"]["RunCodeRequest"], "context"> & {
  context?: { id: string; language?: string };
};

/** A command's events: the yaml's, and the exit code execd adds to `execution_complete` and `error`. */
export type CommandEvent = components["schemas"]["ServerStreamEvent"] & { exit_code?: number };

/** Paths execd serves beyond execd-api.yaml, in openapi-typescript's shape. */
export interface ExtensionPaths {
  /** Sets environment variables for every process execd starts from then on (secrets, a warm sandbox's env). */
  "/paddock/env": {
    post: { parameters: object; requestBody: Json<Record<string, string>>; responses: { 200: Acknowledged } };
  };
  /** Starts an interactive terminal and streams it. */
  "/pty": {
    post: {
      parameters: object;
      requestBody: Json<TerminalStart>;
      responses: { 200: EventStream<TerminalEvent> };
    };
  };
  /** Input bytes for a terminal (at most 1 MiB a request). */
  "/pty/{id}/input": {
    post: {
      parameters: { path: { id: string } };
      requestBody: { content: { "application/octet-stream": Uint8Array } };
      responses: { 200: Acknowledged };
    };
  };
  "/pty/{id}/resize": {
    post: {
      parameters: { path: { id: string } };
      requestBody: Json<{ rows: number; cols: number }>;
      responses: { 200: Acknowledged };
    };
  };
  /** Hangs a terminal up. */
  "/pty/{id}": {
    delete: { parameters: { path: { id: string } }; responses: { 200: Acknowledged } };
  };
  /** Whether anything execd started is still at work, asked before an idle sandbox is paused. */
  "/activity": {
    get: { parameters: object; responses: { 200: Json<ExecdActivity> } };
  };
  /** envd's metrics, under the prefix where execd speaks E2B's envd protocol. */
  "/e2b/envd/metrics": {
    get: { parameters: object; responses: { 200: Json<EnvdMetrics> } };
  };
}

/** Every route of `ExtensionPaths`, as `METHOD path`, for what checks the wire at run time. */
export const extensionRoutes = [
  "POST /paddock/env",
  "POST /pty",
  "POST /pty/{id}/input",
  "POST /pty/{id}/resize",
  "DELETE /pty/{id}",
  "GET /activity",
  "GET /e2b/envd/metrics",
] as const;

/**
 * Where execd speaks E2B's in-sandbox protocols (envd's Connect and HTTP API, the code
 * interpreter's): everything under these prefixes is E2B's wire, forwarded byte for byte.
 */
export const e2bProtocolPrefixes = {
  envd: EXECD_ENVD_PREFIX,
  "code-interpreter": EXECD_CODE_INTERPRETER_PREFIX,
} as const;

export type E2bProtocol = keyof typeof e2bProtocolPrefixes;

/**
 * The other extensions: a header on the streaming routes (`/command`, `/session/{id}/run`,
 * `/code`) asking for output in the chunks the program wrote rather than line by line, and the
 * context id that names a sandbox's default code context of a language.
 */
export const outputFramingHeader = EXECD_OUTPUT_FRAMING_HEADER;
export const defaultCodeContext = EXECD_DEFAULT_CODE_CONTEXT;
