import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { EXECD_ENV_PATH } from "@paddock/common/contracts";
import { clientErrorAnswer } from "@paddock/common/error-shapes";
import { Errors, PaddockError } from "@paddock/common/errors";
import { safeEqual } from "@paddock/common/ids";
import { fieldPath, invalidField } from "@paddock/common/validation-messages";
import { CodeContexts } from "../code/contexts.js";
import { Commands } from "../commands/commands.js";
import { Envd } from "../envd/index.js";
import type { Environment } from "../environment.js";
import * as files from "../files/files.js";
import { IsolatedSessions } from "../isolated/sessions.js";
import { Metrics } from "../metrics/metrics.js";
import { Sessions } from "../sessions/sessions.js";
import { Terminals } from "../terminals/terminals.js";
import { echoRequestId, sendError, sendJson } from "./answers.js";
import { handleIsolated } from "./isolated-routes.js";
import { decodePathSegment, readObject } from "./request.js";

type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  params: string[],
) => Promise<void> | void;

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

  const routes: Route[] = [
    route("GET", "/ping", (_req, res) => sendJson(res, 200, { status: "ok" })),
    route("POST", EXECD_ENV_PATH, async (req, res) => {
      const body = await readObject(req);
      if (!Object.values(body).every((value) => typeof value === "string"))
        throw new PaddockError(
          Errors.invalidRequest,
          invalidField(
            fieldPath("body", Object.keys(body).find((key) => typeof body[key] !== "string") ?? ""),
            "must be string",
          ),
        );
      options.env.set(body as Record<string, string>);
      sendJson(res, 200, {});
    }),
    route("POST", "/command", (req, res) => commands.run(req, res)),
    route("DELETE", "/command", (_req, res, url) => commands.interrupt(url, res)),
    route("GET", "/command/status/:id", (_req, res, _url, [id]) => commands.status(id as string, res)),
    route("GET", "/command/:id/logs", (_req, res, url, [id]) => commands.logs(id as string, url, res)),
    route("POST", "/session", (req, res) => sessions.create(req, res)),
    route("POST", "/session/:id/run", (req, res, _url, [id]) => sessions.run(id as string, req, res)),
    route("DELETE", "/session/:id", (_req, res, _url, [id]) => sessions.remove(id as string, res)),
    route("POST", "/code/context", (req, res) => code.create(req, res)),
    route("GET", "/code/contexts", (_req, res, url) => code.list(url, res)),
    route("DELETE", "/code/contexts", (_req, res, url) => code.removeLanguage(url, res)),
    route("GET", "/code/contexts/:id", (_req, res, _url, [id]) => code.get(id as string, res)),
    route("DELETE", "/code/contexts/:id", (_req, res, _url, [id]) => code.remove(id as string, res)),
    route("POST", "/code", (req, res) => code.run(req, res)),
    route("DELETE", "/code", (_req, res, url) => code.interrupt(url, res)),
    route("GET", "/files/info", (_req, res, url) => files.fileInfo(url, res)),
    route("DELETE", "/files", (_req, res, url) => files.deleteFiles(url, res)),
    route("POST", "/files/permissions", (req, res) => files.setPermissions(req, res)),
    route("POST", "/files/mv", (req, res) => files.move(req, res)),
    route("GET", "/files/search", (_req, res, url) => files.search(url, res)),
    route("POST", "/files/replace", (req, res, url) => files.replace(url, req, res)),
    route("POST", "/files/upload", (req, res) => files.upload(req, res)),
    route("GET", "/files/download", (req, res, url) => files.download(url, req, res)),
    route("GET", "/directories/list", (_req, res, url) => files.listDirectory(url, res)),
    route("POST", "/directories", (req, res) => files.makeDirectories(req, res)),
    route("DELETE", "/directories", (_req, res, url) => files.removeDirectories(url, res)),
    route("POST", "/pty", (req, res) => terminals.start(req, res)),
    route("POST", "/pty/:id/input", (req, res, _url, [id]) => terminals.input(id as string, req, res)),
    route("POST", "/pty/:id/resize", (req, res, _url, [id]) => terminals.resize(id as string, req, res)),
    route("DELETE", "/pty/:id", (_req, res, _url, [id]) => terminals.close(id as string, res)),
    route("GET", "/metrics", (_req, res) => metrics.get(res)),
    route("GET", "/metrics/watch", (_req, res) => metrics.watch(res)),
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

export interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

export function route(method: string, path: string, handler: Handler): Route {
  const pattern = new RegExp(`^${path.replace(/:[a-z]+/g, "([^/]+)")}$`);
  return { method, pattern, handler };
}

function match(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: string[] } | undefined {
  let pathMatched = false;
  for (const candidate of routes) {
    const found = candidate.pattern.exec(path);
    if (!found) continue;
    pathMatched = true;
    if (candidate.method === method)
      return { route: candidate, params: found.slice(1).map(decodePathSegment) };
  }
  if (pathMatched) throw new PaddockError(Errors.methodNotAllowed, `${method} is not allowed on ${path}`);
  return undefined;
}

/**
 * Inside an isolated session's agent, isolated sessions do not nest: the capabilities say so, and
 * every other isolated route answers 501 with the reason.
 */
function isolatedUnavailable(path: string, res: import("node:http").ServerResponse): void {
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
