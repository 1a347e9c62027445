import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import {
  E2B_CODE_INTERPRETER_PORT,
  E2B_ENVD_PORT,
  Errors,
  isPaddockError,
  PaddockError,
  safeEqual,
} from "@paddock/common";
import { type E2bProtocol, ExecdClient, type SandboxOperations } from "@paddock/runtime";
import { forwardHttp, type ProxyRoute, sandboxStillThere } from "@paddock/runtime-api";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { envdAccessToken, sandboxDomain, trafficAccessToken } from "./wire.js";

export interface E2bGatewayOptions {
  sandboxes: SandboxOperations;
  secretKey: string;
  publicUrl: () => string;
  /** Where E2B's API and in-sandbox protocol are mounted: `/e2b`. */
  prefix: string;
  /**
   * Counts a command or file call against the rates of the sandbox's account and of the sandbox's
   * access token (the credential these calls carry); throws 429 `rate_limited` past them.
   */
  chargeCall?: (call: MeteredCall, accountId: string, credential: string) => Promise<void>;
}

type MeteredCall = "commands" | "file_calls";

/** A request the gateway takes: which sandbox, which of its ports, and the path inside it. */
interface Addressed {
  sandboxId: string;
  port: number;
  /** E2B's own path (execd serves it under its protocol's prefix, which the target adds). */
  path: string;
  /** What the call counts as against the account's rates, if anything. */
  call?: MeteredCall;
}

/** envd's calls that start a process or touch files, and the interpreter's runs of code. */
function meteredCallOf(port: number, path: string): MeteredCall | undefined {
  if (port === E2B_ENVD_PORT) {
    if (path.startsWith("/process.Process/Start")) return "commands";
    if (path.startsWith("/files") || path.startsWith("/filesystem.Filesystem/")) return "file_calls";
  }
  if (port === E2B_CODE_INTERPRETER_PORT && path.startsWith("/execute")) return "commands";
  return undefined;
}

/**
 * A rate-limited call refused so E2B's SDKs raise RateLimitError: a Connect stream ends with a
 * `resource_exhausted` error (its HTTP status stays 200, as the protocol wants), a unary Connect
 * call gets that code in a 429, and envd's plain HTTP calls a 429.
 */
function refuseRateLimited(request: FastifyRequest, reply: FastifyReply, error: PaddockError) {
  reply.header("retry-after", String(error.retryAfterSeconds ?? 1));
  const type = header(request.headers, "content-type") ?? "";
  const connect = /\/(process\.Process|filesystem\.Filesystem)\//.test(request.url);
  if (connect && type.startsWith("application/connect+")) {
    const end = Buffer.from(
      JSON.stringify({ error: { code: "resource_exhausted", message: error.message } }),
    );
    const envelope = Buffer.alloc(5);
    envelope.writeUInt8(2, 0); // end of stream
    envelope.writeUInt32BE(end.length, 1);
    return reply
      .status(200)
      .type(type)
      .send(Buffer.concat([envelope, end]));
  }
  if (connect)
    return reply
      .status(429)
      .type("application/json")
      .send({ code: "resource_exhausted", message: error.message });
  return reply.status(429).type("application/json").send({ code: 429, message: error.message });
}

const sandboxHost = /^(\d{1,5})-([a-z0-9][a-z0-9-]{0,127})\.(.+)$/i;
/** Headers that carry E2B's credentials and routing: ours, never the sandbox's. */
const e2bHeaders = ["x-access-token", "e2b-traffic-access-token", "e2b-sandbox-id", "e2b-sandbox-port"];

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
}

/** The E2B protocol execd speaks on an E2B port: envd's and the code interpreter's; others are the sandbox's. */
function execdProtocolOf(port: number): E2bProtocol | undefined {
  if (port === E2B_ENVD_PORT) return "envd";
  if (port === E2B_CODE_INTERPRETER_PORT) return "code-interpreter";
  return undefined;
}

/**
 * A path with its dot segments resolved as execd's URL parser resolves them (`%2e%2e` included),
 * so a path put under envd's or the interpreter's prefix cannot climb out of it to the rest of
 * execd's API. Undefined for what is not a URL path.
 */
function resolvedPath(path: string): string | undefined {
  if (!URL.canParse(`http://sandbox${path}`)) return undefined;
  const url = new URL(`http://sandbox${path}`);
  return url.pathname + url.search;
}

/**
 * E2B's in-sandbox traffic, in the two ways its SDKs address it without wildcard DNS or TLS:
 * under `/e2b` with `E2b-Sandbox-Id` and `E2b-Sandbox-Port` headers (what `E2B_SANDBOX_URL`
 * makes the SDK send), or by a `Host` of `<port>-<sandbox id>.<domain>` (what `getHost(port)`
 * names). envd's port and the code interpreter's go to the sandbox's execd, which speaks both
 * protocols; any other port goes to that port of the sandbox. HTTP is taken by an `onRequest`
 * hook ahead of routing; WebSocket upgrades by the returned route, for the server's upgrade proxy.
 */
export function installE2bGateway(app: FastifyInstance, options: E2bGatewayOptions): ProxyRoute {
  /** Where a request is addressed, "bad" when it is ours but malformed, undefined when not ours. */
  const addressed = (req: IncomingMessage): Addressed | "bad" | undefined => {
    const url = req.url ?? "/";
    const sandboxId = header(req.headers, "e2b-sandbox-id");
    let found: Addressed | undefined;
    if (sandboxId && (url === options.prefix || url.startsWith(`${options.prefix}/`))) {
      const port = Number(header(req.headers, "e2b-sandbox-port") ?? E2B_ENVD_PORT);
      found = { sandboxId, port, path: url.slice(options.prefix.length) || "/" };
    } else {
      const host = sandboxHost.exec(req.headers.host ?? "");
      if (!host || host[3]?.toLowerCase() !== sandboxDomain(options.publicUrl()).toLowerCase())
        return undefined;
      found = { sandboxId: (host[2] as string).toLowerCase(), port: Number(host[1]), path: url };
    }
    if (!Number.isInteger(found.port) || found.port < 1 || found.port > 65535) return "bad";
    if (!execdProtocolOf(found.port)) return found;
    const inside = resolvedPath(found.path);
    if (inside === undefined) return "bad";
    const call = meteredCallOf(found.port, inside);
    return { ...found, path: inside, ...(call ? { call } : {}) };
  };

  /**
   * The envd token opens every port; the traffic token every port but envd's, as on E2B (the code
   * interpreter's calls other than `/execute` carry only the traffic token).
   */
  const authorize = (headers: IncomingHttpHeaders, sandboxId: string, port: number): void => {
    const envd = header(headers, "x-access-token");
    if (envd && safeEqual(envd, envdAccessToken(options.secretKey, sandboxId))) return;
    const traffic = header(headers, "e2b-traffic-access-token");
    if (
      port !== E2B_ENVD_PORT &&
      traffic !== undefined &&
      safeEqual(traffic, trafficAccessToken(options.secretKey, sandboxId))
    )
      return;
    throw new PaddockError(Errors.unauthorized, "missing or wrong access token for this sandbox");
  };

  const route: ProxyRoute = {
    match(req) {
      const to = addressed(req);
      return typeof to === "object" ? to : undefined;
    },
    async resolve(req, sandboxId, port) {
      authorize(req.headers, sandboxId, port);
      // Counted once the caller has shown the sandbox's token: nobody else can spend its budget.
      const to = addressed(req);
      if (options.chargeCall && typeof to === "object" && to.call) {
        const { owner } = await options.sandboxes.get(sandboxId);
        if (owner) await options.chargeCall(to.call, owner, `sandbox:${sandboxId}`);
      }
      const cleared = Object.fromEntries(e2bHeaders.map((name) => [name, null]));
      const stillThere = sandboxStillThere(options.sandboxes, sandboxId);
      const protocol = execdProtocolOf(port);
      if (!protocol)
        return { ...(await options.sandboxes.target(sandboxId, port)), headers: cleared, stillThere };
      const execd = await ExecdClient.forwarding(options.sandboxes, sandboxId, protocol);
      const headers: Record<string, string | null> = { ...cleared, ...execd.headers };
      // envd reads the user a call runs as from `Authorization: Basic base64(user:)`.
      if (req.headers.authorization) headers.authorization = req.headers.authorization;
      return { ...execd, headers, stillThere };
    },
  };

  const refuse = (reply: FastifyReply, status: number, message: string) =>
    reply.status(status).type("application/json").send({ code: status, message });

  app.addHook("onRequest", async (request, reply) => {
    const to = addressed(request.raw);
    if (to === undefined) return;
    if (to === "bad")
      return refuse(reply, 400, "E2b-Sandbox-Port must be a port number, and the path a URL path");
    try {
      await forwardHttp(route, request, reply);
    } catch (error) {
      if (isPaddockError(error) && error.status === 401) return refuse(reply, 401, error.message);
      if (isPaddockError(error) && error.status === 429) return refuseRateLimited(request, reply, error);
      // A sandbox that is gone, paused or not answering is E2B's 502: its SDKs read it as the
      // sandbox having timed out (and `isRunning()` as false).
      const message = isPaddockError(error) ? error.message : String(error);
      return refuse(reply, 502, `sandbox ${to.sandboxId} is not running: ${message}`);
    }
  });
  return route;
}
