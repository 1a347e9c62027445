import { createServer, type Server, type ServerResponse } from "node:http";
import { clientErrorAnswer } from "@paddock/common/error-shapes";
import { Errors, PaddockError } from "@paddock/common/errors";
import { safeEqual } from "@paddock/common/ids";
import { Activity } from "../activity/activity.js";
import { CodeContexts } from "../code/contexts.js";
import { Commands } from "../commands/commands.js";
import { Envd } from "../envd/index.js";
import type { Environment } from "../environment.js";
import { IsolatedSessions } from "../isolated/sessions.js";
import { Metrics } from "../metrics/metrics.js";
import { Sessions } from "../sessions/sessions.js";
import { Terminals } from "../terminals/terminals.js";
import { echoRequestId, sendError, sendJson } from "./answers.js";
import { handleIsolated } from "./isolated-routes.js";
import { match, type Route } from "./router.js";
import { execdRoutes } from "./routes.js";

/** Paths that are not use of the sandbox: its health check, and the question whether it is in use. */
const untracked = new Set(["/ping", "/activity"]);

export interface Execd {
  server: Server;
  close(): void;
}

/** The execd HTTP API: every route requires the sandbox's token. */
export function createExecd(options: {
  token: string | undefined;
  env: Environment;
  extraRoutes?: Route[];
  /** The CPUs the sandbox may use, when the runtime set a limit. */
  cpuLimit?: number;
  /** False in a session's agent: isolated sessions do not nest. */
  isolated?: boolean;
  /** Where envd's file metadata is kept (in memory only without one). */
  fileMetadataPath?: string;
  /** In a session's agent: how each bash session is started (see agentShellPrefix). */
  shellPrefix?: string[];
}): Execd {
  const commands = new Commands(options.env);
  const sessions = new Sessions(options.env, options.shellPrefix);
  const code = new CodeContexts(options.env, sessions);
  const metrics = new Metrics(options.cpuLimit);
  const terminals = new Terminals(options.env);
  const isolated = options.isolated === false ? undefined : new IsolatedSessions(options.env);
  const envd = new Envd({ env: options.env, code, metrics, fileMetadataPath: options.fileMetadataPath });
  const activity = new Activity([
    () => commands.runningCount(),
    () => sessions.busyCount(),
    () => code.busyCount(),
    () => terminals.openCount(),
    () => envd.runningCount(),
    ...(isolated ? [() => isolated.runningCount()] : []),
  ]);

  const routes: Route[] = [
    ...execdRoutes({ env: options.env, commands, sessions, code, terminals, metrics, activity }),
    ...envd.routes,
    ...(options.extraRoutes ?? []),
  ];

  // A 1 MiB write buffer per connection (Node's default is 16 KiB) lets a command's output pipe
  // and the client's socket work side by side instead of waiting on each other chunk by chunk.
  const server = createServer({ highWaterMark: 1024 * 1024 }, async (req, res) => {
    echoRequestId(req, res);
    try {
      const token = req.headers["x-execd-access-token"];
      if (!options.token || typeof token !== "string" || !safeEqual(token, options.token)) {
        throw new PaddockError(Errors.unauthorized, "missing or wrong X-EXECD-ACCESS-TOKEN");
      }
      const url = new URL(req.url ?? "/", "http://execd");
      // A request is use of the sandbox while it lasts, except the questions asked about it.
      if (!untracked.has(url.pathname)) res.once("close", activity.requestStarted());
      if (url.pathname.startsWith("/v1/isolated/")) {
        if (!isolated) return isolatedUnavailable(url.pathname, res);
        return await handleIsolated(isolated, req, res, url);
      }
      const matched = match(routes, req.method ?? "GET", url.pathname);
      if (!matched) throw new PaddockError(Errors.notFound, `no route ${req.method} ${url.pathname}`);
      await matched.route.handler(req, res, url, matched.params);
    } catch (error) {
      // Refused before its body was read (an upload whose first part is wrong, say): the rest is
      // read and dropped, or the connection would wait on it before its next request.
      if (!req.complete) req.resume();
      sendError(res, error);
    }
  });
  server.keepAliveTimeout = 60_000;
  // What the HTTP parser refuses (headers over 16 KiB, a malformed request) is answered as
  // execd's other errors are, `{code, message}`, rather than with a cut connection.
  server.on("clientError", (error, socket) => {
    if (!socket.writable) return socket.destroy();
    socket.end(
      clientErrorAnswer(error, () => "message"),
      () => socket.destroy(),
    );
  });
  return {
    server,
    close() {
      commands.killAll();
      code.closeAll();
      sessions.closeAll();
      terminals.closeAll();
      envd.closeAll();
      isolated?.closeAll();
      server.close();
    },
  };
}

/**
 * Inside an isolated session's agent, isolated sessions do not nest: the capabilities say so, and
 * every other isolated route answers 501 with the reason.
 */
function isolatedUnavailable(path: string, res: ServerResponse): void {
  const reason = "isolated sessions do not nest: this execd serves an isolated session";
  if (path === "/v1/isolated/capabilities") {
    sendJson(res, 200, {
      available: false,
      overlay: false,
      mount_namespace: false,
      pid_namespace: false,
      reason,
    });
    return;
  }
  throw new PaddockError(Errors.notImplemented, reason);
}
