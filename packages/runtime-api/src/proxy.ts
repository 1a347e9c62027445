import { request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { Errors, isPaddockError, PaddockError } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { acceptAccessToken, accessTokenHeader } from "./access.js";
import { apiKeyHeaders, requireApiKey } from "./auth.js";
import { RenewOnAccess } from "./renew-on-access.js";

/**
 * A way into sandbox ports: which URLs it serves, and how it decides who may pass. The runtime API
 * and the control plane each define one; they share the forwarding below.
 */
export interface ProxyRoute {
  /** The sandbox, port and in-sandbox path a request names, or undefined when not ours. */
  match(req: IncomingMessage): { sandboxId: string; port: number; path: string } | undefined;
  /** Throws (401/404) unless the request may reach that sandbox; returns where to connect. */
  resolve(req: IncomingMessage, sandboxId: string, port: number): Promise<ProxyTarget>;
}

export interface ProxyTarget {
  host: string;
  port: number;
  /** Headers the route sets on what is forwarded (after ours are stripped); null removes one. */
  headers?: Record<string, string | null>;
  /** Whether the sandbox still exists, asked while an exchange with it stays open. */
  stillThere?: () => Promise<boolean>;
  /** Put before the matched path: where the target serves what the route names. */
  pathPrefix?: string;
}

/**
 * How often an open exchange (a stream, a WebSocket) asks whether its sandbox still exists. A
 * deleted sandbox's connections can vanish with its network namespace without a FIN or RST (so
 * under gVisor), which would leave the client's stream, and the server's shutdown, waiting.
 */
const stillThereIntervalMs = 2000;

/** Calls `end` once the target's sandbox is gone; returns what stops the watch. */
function endWhenGone(target: ProxyTarget, end: () => void): () => void {
  const { stillThere } = target;
  if (!stillThere) return () => {};
  const timer = setInterval(() => {
    stillThere().then(
      (there) => {
        if (!there) end();
      },
      () => {},
    );
  }, stillThereIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * A `stillThere` for routes over SandboxOperations: false once the sandbox is deleted or ending;
 * each ask while the sandbox runs counts the open exchange as use.
 */
export function sandboxStillThere(sandboxes: SandboxOperations, sandboxId: string): () => Promise<boolean> {
  return () => sandboxes.exchangeOpen(sandboxId);
}

/** Headers that are ours, not the sandbox's: never forwarded. */
const strippedHeaders = new Set([
  ...apiKeyHeaders,
  accessTokenHeader.toLowerCase(),
  "authorization",
  "cookie",
]);

function forwardedHeaders(req: IncomingMessage, target: ProxyTarget): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !strippedHeaders.has(name)) headers[name] = value;
  }
  const address = `${target.host}:${target.port}`;
  headers.host = address;
  headers["x-forwarded-for"] = req.socket.remoteAddress ?? "";
  // The host and scheme the client asked for (kept when a proxy in front already set them), which
  // servers in the sandbox check a browser's Origin against and build their own URLs from.
  headers["x-forwarded-host"] ??= req.headers.host ?? address;
  headers["x-forwarded-proto"] ??= "encrypted" in req.socket ? "https" : "http";
  for (const [name, value] of Object.entries(target.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return headers;
}

/** Splits `/…/{id}/…/{port}/rest?query` into the in-sandbox path and query. */
export function splitPath(rest: string | undefined, query: string | undefined): string {
  return (rest ?? "/") + (query ? `?${query}` : "");
}

/** Streams one HTTP request to the sandbox and its answer back, without buffering either. */
export async function forwardHttp(
  route: ProxyRoute,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const matched = route.match(request.raw);
  if (!matched) throw new PaddockError(Errors.notFound, "not a proxy path");
  const target = await route.resolve(request.raw, matched.sandboxId, matched.port);
  reply.hijack();
  const res = reply.raw;
  const upstream = httpRequest(
    {
      host: target.host,
      port: target.port,
      method: request.raw.method,
      path: `${target.pathPrefix ?? ""}${matched.path}`,
      headers: forwardedHeaders(request.raw, target),
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", (error) => {
    if (res.headersSent) return res.destroy();
    res.writeHead(502, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        code: Errors.endpointUnavailable.code,
        message: `port ${matched.port} did not answer: ${error.message}`,
      }),
    );
  });
  const stopWatching = endWhenGone(target, () => {
    upstream.destroy();
    res.destroy();
  });
  res.on("close", () => {
    stopWatching();
    upstream.destroy();
  });
  // The sandbox answered before reading the whole body (a refusal): the rest is read and dropped,
  // else it stays in the client's keep-alive connection and its next request is never read.
  res.on("finish", () => {
    if (request.raw.complete) return;
    request.raw.unpipe(upstream);
    request.raw.resume();
  });
  request.raw.pipe(upstream);
}

/** A Fastify scope whose bodies are left unread, so the proxy can stream them through. */
export function streamingBodies(app: Parameters<FastifyPluginAsync>[0]): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null));
}

/**
 * Answers an upgrade with a status and closes the socket once that is sent: a client that never
 * closes its side cannot keep the connection (and the server's shutdown) waiting.
 */
function refuseUpgrade(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
}

/**
 * WebSocket upgrades for every proxy route: authorise, then splice client and sandbox sockets.
 * Upgrades for other paths go to `otherwise` (the server's own WebSocket routes), else 404.
 */
export function attachUpgradeProxy(
  server: Server,
  routes: ProxyRoute[],
  otherwise?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
): void {
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const route = routes.find((candidate) => candidate.match(req));
    const matched = route?.match(req);
    if (!route || !matched) {
      if (otherwise) return otherwise(req, socket, head);
      refuseUpgrade(socket, "404 Not Found");
      return;
    }
    void (async () => {
      try {
        const target = await route.resolve(req, matched.sandboxId, matched.port);
        const upstream = connect(target.port, target.host, () => {
          const headers = forwardedHeaders(req, target);
          const lines = [`${req.method} ${target.pathPrefix ?? ""}${matched.path} HTTP/1.1`];
          for (const [name, value] of Object.entries(headers)) {
            for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${item}`);
          }
          upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
          if (head.length) upstream.write(head);
          upstream.pipe(socket);
          socket.pipe(upstream);
        });
        // Asked at once too: an open WebSocket holds its sandbox awake from the start.
        target.stillThere?.().catch(() => {});
        const stopWatching = endWhenGone(target, () => socket.destroy());
        upstream.on("error", () => socket.destroy());
        socket.on("close", () => {
          stopWatching();
          upstream.destroy();
        });
        upstream.on("close", () => socket.destroy());
      } catch (error) {
        const status = isPaddockError(error) ? error.status : 502;
        const text =
          { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict" }[status] ??
          "Bad Gateway";
        refuseUpgrade(socket, `${status} ${text}`);
      }
    })();
  });
}

/** The runtime API's route: `<mount>/sandboxes/{id}/proxy/{port}/…`, by API key or access token. */
export function runtimeProxyRoute(options: {
  sandboxes: SandboxOperations;
  apiKey: string | undefined;
  secretKey: string;
  mountPath: string;
}): ProxyRoute {
  const pattern = /^\/sandboxes\/([^/]+)\/proxy\/(\d{1,5})(\/[^?]*)?(?:\?(.*))?$/;
  const renewOnAccess = new RenewOnAccess(options.sandboxes);
  return {
    match(req) {
      const url = req.url ?? "";
      if (!url.startsWith(`${options.mountPath}/`)) return undefined;
      const found = pattern.exec(url.slice(options.mountPath.length));
      const port = Number(found?.[2]);
      if (!found || port < 1 || port > 65535) return undefined;
      return { sandboxId: found[1] as string, port, path: splitPath(found[3], found[4]) };
    },
    async resolve(req, sandboxId, port) {
      const token = req.headers[accessTokenHeader.toLowerCase()];
      if (!(typeof token === "string" && acceptAccessToken(options.secretKey, sandboxId, token))) {
        requireApiKey(req, options.apiKey);
      }
      // Resumes a sleeping sandbox (its autoResume) and counts as use; then renews its expiry if asked.
      const target = await options.sandboxes.target(sandboxId, port);
      renewOnAccess.accessed(sandboxId);
      return { ...target, stillThere: sandboxStillThere(options.sandboxes, sandboxId) };
    },
  };
}

/** The runtime API's proxy routes (HTTP; upgrades go through `attachUpgradeProxy`). */
export const endpointProxy: FastifyPluginAsync<{ route: ProxyRoute }> = async (app, { route }) => {
  streamingBodies(app);
  const handle = (request: FastifyRequest, reply: FastifyReply) => forwardHttp(route, request, reply);
  app.all("/sandboxes/:sandboxId/proxy/:port", handle);
  app.all("/sandboxes/:sandboxId/proxy/:port/*", handle);
};
