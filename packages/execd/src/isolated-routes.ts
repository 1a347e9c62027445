import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { SseParser } from "@paddock/common/sse";
import {
  badRequest,
  ExecdError,
  notFound,
  optionalInteger,
  optionalStringMap,
  queryOne,
  readObject,
  sendJson,
} from "./http.js";
import { agentJson, agentRequest, readText } from "./isolated-agent.js";
import type { IsolationSupport } from "./isolated-capabilities.js";
import { commitChanges, diffTar } from "./isolated-changes.js";
import type { IsolatedSession, IsolatedSessions } from "./isolated-sessions.js";
import { parseSessionSpec } from "./isolated-spec.js";

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
  if (!support.mountNamespace) {
    throw new ExecdError(
      503,
      "isolation_unavailable",
      `isolated sessions are unavailable in this sandbox: ${support.reasons.join("; ")}`,
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
  if (!found) throw notFound(`no route ${method} ${url.pathname}`);
  const id = decodeURIComponent(found[1] as string);
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
    return run(sessions.get(id, { use: true }), req, res);
  }
  const runRoute = /^runs\/([^/]+)(\/logs)?$/.exec(rest);
  if (runRoute) {
    allow(method, "GET", url);
    const session = sessions.get(id, { use: true });
    const runId = decodeURIComponent(runRoute[1] as string);
    if (!session.backgroundRuns.has(runId)) throw notFound(`no background run ${runId} in session ${id}`);
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
  throw notFound(`no route ${method} ${url.pathname}`);
}

function allow(method: string, expected: string, url: URL): void {
  if (method !== expected)
    throw new ExecdError(405, "method_not_allowed", `${method} is not allowed on ${url.pathname}`);
}

function capabilitiesBody(support: IsolationSupport) {
  const reason = support.reasons.join("; ");
  const feature = (available: boolean) => (available ? { available } : { available, reason });
  return {
    available: support.overlay,
    isolator: "paddock-overlay",
    version: "1",
    ...(support.overlay && support.privateProc ? {} : { message: reason, reason }),
    setpriv_available: support.overlay,
    userns_available: support.mountNamespace,
    diff_supported: support.overlay,
    commit_supported: support.overlay,
    overlay: support.overlay,
    mount_namespace: support.mountNamespace,
    pid_namespace: support.pidNamespace && support.mountNamespace,
    private_proc: support.privateProc,
    features: {
      user_namespace: feature(support.userNamespace),
      mount_namespace: feature(support.mountNamespace),
      pid_namespace: feature(support.pidNamespace && support.mountNamespace),
      overlay: feature(support.overlay),
      private_proc: feature(support.privateProc),
      diff: feature(support.overlay),
      commit: feature(support.overlay),
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

/** Runs code through the agent's /command in the workspace: SSE in the foreground, a handle in the background. */
async function run(session: IsolatedSession, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readObject(req);
  if (typeof body.code !== "string" || body.code === "") throw badRequest("code is required");
  const envs = optionalStringMap(body, "envs");
  const timeoutSeconds = optionalInteger(body, "timeout_seconds");
  if (body.background !== undefined && typeof body.background !== "boolean")
    throw badRequest("background must be a boolean");
  const background = body.background === true;
  const command = {
    command: body.code,
    cwd: session.spec.workspace.path,
    ...(envs ? { envs } : {}),
    ...(timeoutSeconds && !background ? { timeout: timeoutSeconds * 1000 } : {}),
    background,
  };
  const answer = await agentRequest(session.agent, "POST", "/command", { body: JSON.stringify(command) });
  if (background) {
    const text = await readText(answer);
    const parser = new SseParser();
    const init = parser
      .push(text)
      .concat(parser.end())
      .find((event) => event.type === "init");
    if (answer.statusCode !== 200 || typeof init?.text !== "string")
      throw new ExecdError(
        502,
        "agent_failed",
        `the session's agent did not start the run: ${text.slice(0, 500)}`,
      );
    session.backgroundRuns.add(init.text);
    sendJson(res, 202, { session_id: session.id, run_id: init.text, started_at: new Date().toISOString() });
    return;
  }
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  res.flushHeaders();
  // A client that goes away takes its run with it (the agent kills the command's group).
  res.on("close", () => answer.destroy());
  await pipeline(answer, res).catch(() => undefined);
}

async function runStatus(session: IsolatedSession, runId: string, res: ServerResponse): Promise<void> {
  const { status, body } = await agentJson(
    session.agent,
    "GET",
    `/command/status/${encodeURIComponent(runId)}`,
  );
  if (status !== 200) throw notFound(`no background run ${runId} in session ${session.id}`);
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
    throw badRequest("cursor must be a non-negative integer");
  const answer = await agentRequest(session.agent, "GET", `/command/${encodeURIComponent(runId)}/logs`);
  const log = Buffer.from(await readText(answer));
  if (answer.statusCode !== 200) throw notFound(`no background run ${runId} in session ${session.id}`);
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
