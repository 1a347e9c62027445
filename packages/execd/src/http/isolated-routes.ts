import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { EXECD_OUTPUT_FRAMING_HEADER } from "@paddock/common/contracts";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { type SseEvent, SseParser } from "@paddock/common/sse";
import { openSseWriter } from "@paddock/common/sse-writer";
import { fieldPath, invalidField, missingProperty } from "@paddock/common/validation-messages";
import { agentJson, agentRequest, readText } from "../isolated/agent.js";
import { type IsolationSupport, isolationFeatures } from "../isolated/capabilities.js";
import { commitChanges, diffTar } from "../isolated/changes.js";
import type { IsolatedSession, IsolatedSessions } from "../isolated/sessions.js";
import { parseSessionSpec } from "../isolated/spec.js";
import { shellQuote } from "../sessions/sessions.js";
import { sendJson } from "./answers.js";
import { decodePathSegment, optionalInteger, optionalStringMap, queryOne, readObject } from "./request.js";

/** Session routes forwarded as they are to the session's agent (it serves the merged tree). */
const agentRoutes = new Set([
  "files/info",
  "files/download",
  "files/upload",
  "files",
  "files/mv",
  "files/permissions",
  "files/replace",
  "files/search",
  "directories/list",
  "directories",
]);

/** At most this much of a run's log per request (the spec's bound). */
const maxLogPage = 16 * 2 ** 20;

/** Every /v1/isolated route. */
export async function handleIsolated(
  sessions: IsolatedSessions,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? "GET";
  const path = url.pathname.slice("/v1/isolated/".length).replace(/\/+$/, "");
  const support = await sessions.capabilities();
  if (path === "capabilities") {
    allow(method, "GET", url);
    return sendJson(res, 200, capabilitiesBody(support));
  }
  if (!support.features.mount_namespace.available) {
    throw new PaddockError(
      ExecdErrors.isolationUnavailable,
      `isolated sessions are unavailable in this sandbox: ${support.features.mount_namespace.reason}`,
    );
  }
  if (path === "session") {
    allow(method, "POST", url);
    const session = await sessions.create(parseSessionSpec(await readObject(req)));
    return sendJson(res, 201, { session_id: session.id, created_at: session.createdAt });
  }
  if (path === "sessions") {
    allow(method, "GET", url);
    return sendJson(res, 200, { sessions: sessions.list().map((session) => summary(sessions, session)) });
  }
  const found = /^session\/([^/]+)(?:\/(.*))?$/.exec(path);
  if (!found) throw new PaddockError(Errors.notFound, `no route ${method} ${url.pathname}`);
  const id = decodePathSegment(found[1] as string);
  const rest = found[2] ?? "";

  if (rest === "") {
    if (method === "DELETE") {
      await sessions.remove(id);
      return sendJson(res, 200, {});
    }
    allow(method, "GET", url);
    const session = sessions.get(id);
    return sendJson(res, 200, { ...summary(sessions, session), ...session.spec });
  }
  if (rest === "run") {
    allow(method, "POST", url);
    return run(sessions, sessions.get(id, { use: true }), req, res);
  }
  const runRoute = /^runs\/([^/]+)(\/logs)?$/.exec(rest);
  if (runRoute) {
    allow(method, "GET", url);
    const session = sessions.get(id, { use: true });
    const runId = decodePathSegment(runRoute[1] as string);
    if (!session.backgroundRuns.has(runId))
      throw new PaddockError(ExecdErrors.commandNotFound, `no background run ${runId} in session ${id}`);
    return runRoute[2] ? runLogs(session, runId, url, res) : runStatus(session, runId, res);
  }
  if (rest === "diff") {
    allow(method, "GET", url);
    const session = sessions.get(id, { use: true });
    const views = sessions.views(session);
    res.writeHead(200, {
      "content-type": "application/x-tar",
      "content-disposition": `attachment; filename="${session.id}.diff.tar"`,
    });
    await pipeline(Readable.from(diffTar(views)), res);
    return;
  }
  if (rest === "commit") {
    allow(method, "POST", url);
    const session = sessions.get(id, { use: true });
    return sendJson(res, 200, await commitChanges(sessions.views(session)));
  }
  if (agentRoutes.has(rest)) return forward(sessions.get(id, { use: true }), rest, req, res, url);
  throw new PaddockError(Errors.notFound, `no route ${method} ${url.pathname}`);
}

function allow(method: string, expected: string, url: URL): void {
  if (method !== expected)
    throw new PaddockError(Errors.methodNotAllowed, `${method} is not allowed on ${url.pathname}`);
}

function capabilitiesBody(support: IsolationSupport) {
  const { features } = support;
  const overlay = features.overlay.available;
  const unavailable = isolationFeatures.filter((name) => !features[name].available);
  const reason = unavailable.map((name) => `${name}: ${features[name].reason}`).join("; ");
  return {
    available: overlay,
    isolator: "paddock-overlay",
    version: "2",
    ...(unavailable.length > 0 ? { message: reason, reason } : {}),
    setpriv_available: overlay,
    userns_available: features.mount_namespace.available,
    diff_supported: overlay,
    commit_supported: overlay,
    overlay,
    mount_namespace: features.mount_namespace.available,
    pid_namespace: features.pid_namespace.available,
    private_proc: features.private_proc.available,
    binds_supported: features.binds.available,
    features: {
      ...features,
      diff: features.overlay,
      commit: features.overlay,
    },
  };
}

function summary(sessions: IsolatedSessions, session: IsolatedSession) {
  return {
    session_id: session.id,
    status: session.status,
    created_at: session.createdAt,
    last_run_at: session.lastRunAt,
    idle_remaining_seconds: sessions.idleRemainingSeconds(session),
  };
}

/**
 * Runs code in the session. Foreground runs share the session's shell (its directory and
 * variables carry over) and stream SSE; background runs start afresh in the workspace through
 * the agent's /command and answer a handle.
 */
async function run(
  sessions: IsolatedSessions,
  session: IsolatedSession,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await readObject(req);
  if (body.code === undefined) throw new PaddockError(Errors.invalidRequest, missingProperty("body", "code"));
  if (typeof body.code !== "string" || body.code === "")
    throw new PaddockError(Errors.invalidRequest, invalidField("body.code", "must be a non-empty string"));
  const envs = optionalStringMap(body, "envs");
  for (const name of Object.keys(envs ?? {}))
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(fieldPath("body.envs", name), "is not a variable name"),
      );
  const timeoutSeconds = optionalInteger(body, "timeout_seconds");
  if (body.background !== undefined && typeof body.background !== "boolean")
    throw new PaddockError(Errors.invalidRequest, invalidField("body.background", "must be boolean"));
  const framing = req.headers[EXECD_OUTPUT_FRAMING_HEADER.toLowerCase()];
  const headers: Record<string, string | string[]> =
    framing === undefined ? {} : { [EXECD_OUTPUT_FRAMING_HEADER]: framing };
  if (body.background === true) return runInBackground(session, body.code, envs, res);
  const shell = await sessions.shell(session);
  if (shell === undefined) return runAlone(session, body.code, envs, timeoutSeconds, headers, res);

  const exports = Object.entries(envs ?? {})
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join("");
  const answer = await agentRequest(session.agent, "POST", `/session/${encodeURIComponent(shell)}/run`, {
    headers,
    body: JSON.stringify({
      command: exports + body.code,
      ...(timeoutSeconds ? { timeout: timeoutSeconds * 1000 } : {}),
    }),
  });
  if (answer.statusCode !== 200) {
    const text = await readText(answer);
    if (answer.statusCode === 409)
      throw new PaddockError(
        ExecdErrors.sessionBusy,
        `isolated session ${session.id} is already running code`,
      );
    if (answer.statusCode === 404) session.shell = undefined;
    throw new PaddockError(
      ExecdErrors.agentFailed,
      `the session's shell did not run the code: ${text.slice(0, 500)}`,
    );
  }
  const sse = openSseWriter(res, { timestamp: true });
  let ended = false;
  // A client that goes away takes its run with it: the shell is ended (its state too), as a
  // timeout ends it, and the next run opens a new one.
  res.on("close", () => {
    answer.destroy();
    if (ended || session.shell !== shell) return;
    session.shell = undefined;
    void agentJson(session.agent, "DELETE", `/session/${encodeURIComponent(shell)}`).catch(() => undefined);
  });
  const parser = new SseParser();
  const forward = (events: SseEvent[]) => {
    for (const event of events) {
      if (event.type === "execution_complete" || event.type === "error") ended = true;
      // The shell ended (a timeout kills it, `exit` ends it): the next run opens a new one.
      if (
        event.type === "error" &&
        (event.error as { ename?: string } | undefined)?.ename === "SessionError"
      ) {
        session.shell = undefined;
        const evalue = String((event.error as { evalue?: unknown }).evalue ?? "");
        if (evalue.startsWith("timed out")) event.error = { ename: "CommandTimeout", evalue, traceback: [] };
      }
      sse.send(event);
    }
  };
  answer.setEncoding("utf8");
  try {
    for await (const chunk of answer) forward(parser.push(chunk as string));
    forward(parser.end());
  } catch {
    // The client went away and took the stream with it.
  }
  sse.end();
}

/** The agent's `/command` body for a run of the session's code, started in the workspace. */
function agentCommand(
  session: IsolatedSession,
  code: string,
  envs: Record<string, string> | undefined,
  options: { timeout?: number; background?: boolean },
) {
  return { command: code, cwd: session.spec.workspace.path, ...(envs ? { envs } : {}), ...options };
}

/** A foreground run on its own, in the workspace: for images without bash, which has no shell to share. */
async function runAlone(
  session: IsolatedSession,
  code: string,
  envs: Record<string, string> | undefined,
  timeoutSeconds: number | undefined,
  headers: Record<string, string | string[]>,
  res: ServerResponse,
): Promise<void> {
  const command = agentCommand(session, code, envs, timeoutSeconds ? { timeout: timeoutSeconds * 1000 } : {});
  const answer = await agentRequest(session.agent, "POST", "/command", {
    headers,
    body: JSON.stringify(command),
  });
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  res.flushHeaders();
  // A client that goes away takes its run with it (the agent kills the command's group).
  res.on("close", () => answer.destroy());
  await pipeline(answer, res).catch(() => undefined);
}

async function runInBackground(
  session: IsolatedSession,
  code: string,
  envs: Record<string, string> | undefined,
  res: ServerResponse,
): Promise<void> {
  const command = agentCommand(session, code, envs, { background: true });
  const answer = await agentRequest(session.agent, "POST", "/command", { body: JSON.stringify(command) });
  const text = await readText(answer);
  const parser = new SseParser();
  const init = parser
    .push(text)
    .concat(parser.end())
    .find((event) => event.type === "init");
  if (answer.statusCode !== 200 || typeof init?.text !== "string")
    throw new PaddockError(
      ExecdErrors.agentFailed,
      `the session's agent did not start the run: ${text.slice(0, 500)}`,
    );
  session.backgroundRuns.add(init.text);
  sendJson(res, 202, { session_id: session.id, run_id: init.text, started_at: new Date().toISOString() });
}

async function runStatus(session: IsolatedSession, runId: string, res: ServerResponse): Promise<void> {
  const { status, body } = await agentJson(
    session.agent,
    "GET",
    `/command/status/${encodeURIComponent(runId)}`,
  );
  if (status !== 200)
    throw new PaddockError(
      ExecdErrors.commandNotFound,
      `no background run ${runId} in session ${session.id}`,
    );
  const command = body as Record<string, unknown>;
  sendJson(res, 200, {
    session_id: session.id,
    run_id: runId,
    running: command.running,
    exit_code: command.exit_code ?? null,
    ...(command.error ? { error: command.error } : {}),
    started_at: command.started_at,
    finished_at: command.finished_at ?? null,
  });
}

async function runLogs(
  session: IsolatedSession,
  runId: string,
  url: URL,
  res: ServerResponse,
): Promise<void> {
  const cursor = queryOne(url, "cursor");
  if (cursor !== undefined && !/^\d+$/.test(cursor))
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField("query.cursor", "must be a non-negative integer"),
    );
  const answer = await agentRequest(session.agent, "GET", `/command/${encodeURIComponent(runId)}/logs`);
  const log = Buffer.from(await readText(answer));
  if (answer.statusCode !== 200)
    throw new PaddockError(
      ExecdErrors.commandNotFound,
      `no background run ${runId} in session ${session.id}`,
    );
  // The wire cursor is a byte offset into the run's combined output.
  const from = Math.min(Number(cursor ?? 0), log.length);
  const page = log.subarray(from, from + maxLogPage);
  res.writeHead(200, {
    "content-type": "text/plain; charset=utf-8",
    "EXECD-ISOLATED-TAIL-CURSOR": String(from + page.length),
  });
  res.end(page);
}

/** Hands a files or directories route to the agent, which serves it on the session's merged tree. */
async function forward(
  session: IsolatedSession,
  route: string,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const hasBody = req.method !== "GET" && req.method !== "DELETE";
  const answer = await agentRequest(session.agent, req.method ?? "GET", `/${route}${url.search}`, {
    headers: req.headers,
    ...(hasBody ? { body: req } : {}),
  });
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  await pipeline(answer, res);
}
