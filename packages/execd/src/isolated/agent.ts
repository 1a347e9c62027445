import { type IncomingMessage, request } from "node:http";
import type { Readable } from "node:stream";
import { EXECD_TOKEN_HEADER } from "@paddock/common/contracts";
import { busybox, unshare } from "./capabilities.js";

/**
 * Inside every isolated session runs a second execd (the agent), PID 1's child in the session's
 * namespaces, serving the ordinary /command, /files and /directories routes on a Unix socket in
 * the session's private tmpfs. It sees exactly what the session sees (the overlay, the session's
 * processes), so execd forwards a session's routes to it instead of reaching into namespaces.
 */
export const ISOLATED_AGENT_SOCKET_ENV = "PADDOCK_ISOLATED_AGENT_SOCKET";
/** Set for an agent whose runtime lets a session mount a fresh /proc (gVisor). */
export const ISOLATED_AGENT_PRIVATE_PROC_ENV = "PADDOCK_ISOLATED_PRIVATE_PROC";

/**
 * PID 1 of the shell's PID namespace: runs bash (PID 2, as under OpenSandbox's bwrap), reaps
 * what it leaves, and when it ends takes the rest of the namespace with it, as Linux does when a
 * namespace's init exits and gVisor does not.
 */
const shellInit = '"$@"; S=$?; kill -9 -1 2>/dev/null; exit $S';

/**
 * How the agent starts the session's shell: in a PID namespace of its own, so that `$$` is 2 and
 * the shell's processes are numbered from 1; with a /proc of its own where the runtime allows
 * one, so that `ps` and `kill` speak of the same numbers.
 */
export function agentShellPrefix(privateProc: boolean): string[] {
  return [
    ...unshare,
    "-p",
    "-f",
    ...(privateProc ? ["-m", "--mount-proc"] : []),
    "--",
    busybox,
    "sh",
    "-c",
    shellInit,
    "init",
  ];
}

export interface AgentAddress {
  socketPath: string;
  token: string;
}

/** One request to a session's agent; the answer's body is left for the caller to read or pipe. */
export function agentRequest(
  agent: AgentAddress,
  method: string,
  path: string,
  options: {
    headers?: Record<string, string | string[] | undefined>;
    body?: Readable | string;
    signal?: AbortSignal;
  } = {},
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined && !["host", "connection", EXECD_TOKEN_HEADER.toLowerCase()].includes(name))
        headers[name] = value;
    }
    headers[EXECD_TOKEN_HEADER] = agent.token;
    if (typeof options.body === "string") {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(options.body));
    }
    const outgoing = request(
      {
        socketPath: agent.socketPath,
        method,
        path,
        headers,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      resolve,
    );
    outgoing.on("error", reject);
    if (options.body === undefined) outgoing.end();
    else if (typeof options.body === "string") outgoing.end(options.body);
    else options.body.pipe(outgoing);
  });
}

/** A JSON answer from the agent. */
export async function agentJson(
  agent: AgentAddress,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await agentRequest(agent, method, path, {
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await readText(response);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Plain text (logs).
  }
  return { status: response.statusCode ?? 500, body: parsed };
}

/** How long the agent may take to say what it runs, and the most of its answer that is read. */
const activityTimeoutMs = 2000;
const activityAnswerLimit = 1024;

/**
 * How many runs the agent has going (its own `/activity`): the session's shell busy with a
 * foreground run, background runs, runs of images without bash. The session's code could answer
 * in the agent's place, so the answer is read within bounds; one that does not come in time, or
 * is not a count, counts none.
 */
export async function agentRunning(agent: AgentAddress): Promise<number> {
  try {
    const signal = AbortSignal.timeout(activityTimeoutMs);
    const response = await agentRequest(agent, "GET", "/activity", { signal });
    let text = "";
    for await (const chunk of response) {
      text += (chunk as Buffer).toString("utf8");
      if (text.length > activityAnswerLimit) {
        response.destroy();
        return 0;
      }
    }
    const running = (JSON.parse(text) as { running?: unknown }).running;
    return response.statusCode === 200 && Number.isSafeInteger(running) && (running as number) >= 0
      ? (running as number)
      : 0;
  } catch {
    return 0;
  }
}

export async function readText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
