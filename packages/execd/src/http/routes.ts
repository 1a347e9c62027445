import { EXECD_ENV_PATH } from "@paddock/common/contracts";
import { Errors, PaddockError } from "@paddock/common/errors";
import { fieldPath, invalidField, missingProperty } from "@paddock/common/validation-messages";
import type { Activity } from "../activity/activity.js";
import { codeLanguage } from "../code/cells.js";
import type { CodeContexts } from "../code/contexts.js";
import type { Commands } from "../commands/commands.js";
import type { Environment } from "../environment.js";
import { isRecord } from "../json.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Sessions } from "../sessions/sessions.js";
import type { Terminals } from "../terminals/terminals.js";
import { sendJson } from "./answers.js";
import { eventStream } from "./event-stream.js";
import { fileRoutes } from "./file-routes.js";
import {
  optionalInteger,
  optionalString,
  optionalStringMap,
  queryOne,
  readJson,
  readObject,
  requestedFraming,
} from "./request.js";
import { type Route, route } from "./router.js";

const invalid = (message: string) => new PaddockError(Errors.invalidRequest, message);

/** rows and cols of a terminal: at least 1, at most 10000. */
function checkTerminalSize(rows: number, cols: number): void {
  if (rows > 10_000 || cols > 10_000)
    throw invalid(invalidField(rows > 10_000 ? "body.rows" : "body.cols", "must be <= 10000"));
}

/**
 * OpenSandbox's execd API: each handler reads and checks its request, calls its concept with
 * typed input, and writes the answer (JSON, or the concept's events as server-sent events).
 */
export function execdRoutes(deps: {
  env: Environment;
  commands: Commands;
  sessions: Sessions;
  code: CodeContexts;
  terminals: Terminals;
  metrics: Metrics;
  activity: Activity;
}): Route[] {
  const { env, commands, sessions, code, terminals, metrics, activity } = deps;
  return [
    route("GET", "/ping", (_req, res) => sendJson(res, 200, { status: "ok" })),
    route("GET", "/activity", async (_req, res) => sendJson(res, 200, await activity.report())),
    route("POST", EXECD_ENV_PATH, async (req, res) => {
      const body = await readObject(req);
      if (!Object.values(body).every((value) => typeof value === "string"))
        throw invalid(
          invalidField(
            fieldPath("body", Object.keys(body).find((key) => typeof body[key] !== "string") ?? ""),
            "must be string",
          ),
        );
      env.set(body as Record<string, string>);
      sendJson(res, 200, {});
    }),

    route("POST", "/command", async (req, res) => {
      const framing = requestedFraming(req);
      const body = await readObject(req);
      const command = optionalString(body, "command");
      if (command === undefined) throw invalid(missingProperty("body", "command"));
      if (command === "") throw invalid(invalidField("body.command", "must not be empty"));
      const cwd = optionalString(body, "cwd");
      const timeout = optionalInteger(body, "timeout", 1);
      const uid = optionalInteger(body, "uid");
      const gid = optionalInteger(body, "gid");
      if (gid !== undefined && uid === undefined) throw invalid(invalidField("body.gid", "needs uid too"));
      const envs = optionalStringMap(body, "envs");
      if (body.background !== undefined && typeof body.background !== "boolean")
        throw invalid(invalidField("body.background", "must be boolean"));
      const background = body.background === true;
      commands.run({ command, cwd, timeout, uid, gid, envs, background, framing }, eventStream(res));
    }),
    route("DELETE", "/command", (_req, res, url) =>
      sendJson(res, 200, commands.interrupt(queryOne(url, "id", true) as string)),
    ),
    route("GET", "/command/status/:id", (_req, res, _url, [id]) =>
      sendJson(res, 200, commands.status(id as string)),
    ),
    route("GET", "/command/:id/logs", (_req, res, url, [id]) => {
      const command = commands.find(id as string);
      const raw = queryOne(url, "cursor");
      const cursor = raw === undefined ? undefined : Number(raw);
      if (cursor !== undefined && (!Number.isInteger(cursor) || cursor < 0))
        throw invalid(invalidField("query.cursor", "must be a non-negative integer"));
      const { text, next, running } = commands.logs(command, cursor);
      res.writeHead(200, {
        "content-type": "text/plain; charset=utf-8",
        "EXECD-COMMANDS-TAIL-CURSOR": String(next),
        "EXECD-COMMANDS-RUNNING": String(running),
      });
      res.end(text);
    }),

    route("POST", "/session", async (req, res) => {
      // The body is optional, and one that is not a JSON object counts as none.
      const text = req.headers["content-length"] === "0" ? undefined : await readJson(req).catch(() => ({}));
      const body = isRecord(text) ? text : {};
      sendJson(res, 200, { session_id: await sessions.open(optionalString(body, "cwd")) });
    }),
    route("POST", "/session/:id/run", async (req, res, _url, [id]) => {
      const session = sessions.find(id as string);
      const framing = requestedFraming(req);
      const body = await readObject(req);
      const command = optionalString(body, "command") ?? optionalString(body, "code");
      if (command === undefined) throw invalid(missingProperty("body", "command"));
      const run = {
        command,
        framing,
        cwd: optionalString(body, "cwd"),
        timeout: optionalInteger(body, "timeout", 0),
      };
      sessions.run(session, run, eventStream(res));
    }),
    route("DELETE", "/session/:id", (_req, res, _url, [id]) => {
      sessions.remove(id as string);
      sendJson(res, 200, {});
    }),

    route("POST", "/code/context", async (req, res) => {
      const body = await readObject(req);
      const context = await code.createContext(optionalString(body, "language") ?? "python");
      sendJson(res, 200, { id: context.id, language: context.language });
    }),
    route("GET", "/code/contexts", (_req, res, url) => {
      const contexts = code.contextList(queryOne(url, "language"));
      sendJson(
        res,
        200,
        contexts.map((context) => ({ id: context.id, language: context.language })),
      );
    }),
    route("DELETE", "/code/contexts", (_req, res, url) => {
      code.removeLanguage(codeLanguage(queryOne(url, "language", true) as string, "query.language"));
      sendJson(res, 200, {});
    }),
    route("GET", "/code/contexts/:id", (_req, res, _url, [id]) => {
      const context = code.context(id as string);
      sendJson(res, 200, { id: context.id, language: context.language });
    }),
    route("DELETE", "/code/contexts/:id", (_req, res, _url, [id]) => {
      code.removeContext(id as string);
      sendJson(res, 200, {});
    }),
    route("POST", "/code", async (req, res) => {
      const body = await readObject(req);
      const cell = optionalString(body, "code");
      if (cell === undefined) throw invalid(missingProperty("body", "code"));
      const requested = isRecord(body.context) ? body.context : {};
      await code.run(
        {
          code: cell,
          contextId: typeof requested.id === "string" ? requested.id : "",
          language: typeof requested.language === "string" ? requested.language : undefined,
        },
        eventStream(res),
      );
    }),
    route("DELETE", "/code", (_req, res, url) =>
      sendJson(res, 200, code.interrupt(queryOne(url, "id", true) as string)),
    ),

    ...fileRoutes(),

    route("POST", "/pty", async (req, res) => {
      const body = await readObject(req);
      const command = optionalString(body, "command");
      const cwd = optionalString(body, "cwd");
      const rows = optionalInteger(body, "rows", 1) ?? 24;
      const cols = optionalInteger(body, "cols", 1) ?? 80;
      checkTerminalSize(rows, cols);
      const uid = optionalInteger(body, "uid");
      const gid = optionalInteger(body, "gid");
      if (gid !== undefined && uid === undefined) throw invalid(invalidField("body.gid", "needs uid too"));
      const envs = optionalStringMap(body, "envs");
      terminals.start({ command, cwd, rows, cols, uid, gid, envs }, eventStream(res));
    }),
    route("POST", "/pty/:id/input", async (req, res, _url, [id]) => {
      await terminals.input(terminals.find(id as string), req);
      sendJson(res, 200, {});
    }),
    route("POST", "/pty/:id/resize", async (req, res, _url, [id]) => {
      const terminal = terminals.find(id as string);
      const body = await readObject(req);
      const rows = optionalInteger(body, "rows", 1);
      const cols = optionalInteger(body, "cols", 1);
      if (rows === undefined || cols === undefined)
        throw invalid(missingProperty("body", rows === undefined ? "rows" : "cols"));
      checkTerminalSize(rows, cols);
      terminals.resize(terminal, rows, cols);
      sendJson(res, 200, {});
    }),
    route("DELETE", "/pty/:id", (_req, res, _url, [id]) => {
      terminals.close(id as string);
      sendJson(res, 200, {});
    }),

    route("GET", "/metrics", (_req, res) => sendJson(res, 200, metrics.snapshot())),
    route("GET", "/metrics/watch", (_req, res) => metrics.watch(eventStream(res))),
  ];
}
