import {
  E2B_CODE_INTERPRETER_PORT,
  E2B_ENVD_PORT,
  EXECD_CODE_INTERPRETER_PREFIX,
  EXECD_ENVD_PREFIX,
  EXECD_PORT,
  EXECD_TOKEN_HEADER,
  isPaddockError,
  safeEqual,
} from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import { forwardHttp, type ProxyRoute } from "@paddock/runtime-api";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { envdAccessToken, sandboxDomain, trafficAccessToken } from "./wire.js";

export interface E2bGatewayOptions {
  sandboxes: SandboxOperations;
  secretKey: string;
  publicUrl: () => string;
  /** Where E2B's API and in-sandbox protocol are mounted: `/e2b`. */
  prefix: string;
}

/** A request the gateway takes: which sandbox, which of its ports, and the path inside. */
interface Addressed {
  sandboxId: string;
  port: number;
  path: string;
}

const sandboxHost = /^(\d{1,5})-([a-z0-9][a-z0-9-]{0,127})\.(.+)$/i;
/** Headers that carry E2B's credentials and routing: ours, never the sandbox's. */
const e2bHeaders = ["x-access-token", "e2b-traffic-access-token", "e2b-sandbox-id", "e2b-sandbox-port"];

/**
 * A path with its dot segments resolved as execd's URL parser will resolve them (`%2e%2e`
 * included), so a path under envd's or the interpreter's prefix cannot climb out of it to the
 * rest of execd's API.
 */
function resolvedPath(path: string): string {
  const url = new URL(`http://sandbox${path}`);
  return url.pathname + url.search;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * E2B's in-sandbox traffic, in the two ways its SDKs address it without wildcard DNS or TLS:
 * under `/e2b` with `E2b-Sandbox-Id` and `E2b-Sandbox-Port` headers (what `E2B_SANDBOX_URL`
 * makes the SDK send), or by a `Host` of `<port>-<sandbox id>.<domain>` (what `getHost(port)`
 * names). envd's port and the code interpreter's go to the sandbox's execd, which speaks both
 * protocols; any other port goes to that port of the sandbox. Bodies stream both ways.
 */
export function installE2bGateway(app: FastifyInstance, options: E2bGatewayOptions): void {
  const addressed = (request: FastifyRequest): Addressed | "bad_port" | undefined => {
    const url = request.raw.url ?? "/";
    const sandboxId = header(request, "e2b-sandbox-id");
    if (sandboxId && (url === options.prefix || url.startsWith(`${options.prefix}/`))) {
      const port = Number(header(request, "e2b-sandbox-port") ?? E2B_ENVD_PORT);
      if (!Number.isInteger(port) || port < 1 || port > 65535) return "bad_port";
      return { sandboxId, port, path: url.slice(options.prefix.length) || "/" };
    }
    const host = sandboxHost.exec(request.headers.host ?? "");
    if (host && host[3]?.toLowerCase() === sandboxDomain(options.publicUrl()).toLowerCase()) {
      const port = Number(host[1]);
      if (port < 1 || port > 65535) return "bad_port";
      return { sandboxId: (host[2] as string).toLowerCase(), port, path: url };
    }
    return undefined;
  };

  /**
   * The envd token opens every port; the traffic token every port but envd's, as on E2B (the code
   * interpreter's calls other than `/execute` carry only the traffic token).
   */
  const authorized = (request: FastifyRequest, to: Addressed): boolean => {
    const envd = header(request, "x-access-token");
    if (envd && safeEqual(envd, envdAccessToken(options.secretKey, to.sandboxId))) return true;
    const traffic = header(request, "e2b-traffic-access-token");
    return (
      to.port !== E2B_ENVD_PORT &&
      traffic !== undefined &&
      safeEqual(traffic, trafficAccessToken(options.secretKey, to.sandboxId))
    );
  };

  const route = (to: Addressed): ProxyRoute => {
    const execdPrefix =
      to.port === E2B_ENVD_PORT
        ? EXECD_ENVD_PREFIX
        : to.port === E2B_CODE_INTERPRETER_PORT
          ? EXECD_CODE_INTERPRETER_PREFIX
          : undefined;
    return {
      match: () => ({
        sandboxId: to.sandboxId,
        port: to.port,
        path: execdPrefix ? `${execdPrefix}${resolvedPath(to.path)}` : to.path,
      }),
      async resolve(req) {
        const cleared = Object.fromEntries(e2bHeaders.map((name) => [name, null]));
        if (!execdPrefix)
          return { ...(await options.sandboxes.target(to.sandboxId, to.port)), headers: cleared };
        const target = await options.sandboxes.target(to.sandboxId, EXECD_PORT);
        const headers: Record<string, string | null> = {
          ...cleared,
          [EXECD_TOKEN_HEADER.toLowerCase()]: options.sandboxes.tokens(to.sandboxId).execd,
        };
        // envd reads the user a call runs as from `Authorization: Basic base64(user:)`.
        if (req.headers.authorization) headers.authorization = req.headers.authorization;
        return { ...target, headers };
      },
    };
  };

  const refuse = (reply: FastifyReply, status: number, message: string) =>
    reply.status(status).type("application/json").send({ code: status, message });

  app.addHook("onRequest", async (request, reply) => {
    const to = addressed(request);
    if (to === undefined) return;
    if (to === "bad_port") return refuse(reply, 400, "E2b-Sandbox-Port must be a port number");
    if (!authorized(request, to)) return refuse(reply, 401, "missing or wrong access token for this sandbox");
    if (!URL.canParse(`http://sandbox${to.path}`))
      return refuse(reply, 400, "the request path is not a URL path");
    try {
      await forwardHttp(route(to), request, reply);
    } catch (error) {
      // A sandbox that is gone, paused or not answering is E2B's 502: its SDKs read it as the
      // sandbox having timed out (and `isRunning()` as false).
      const message = isPaddockError(error) ? error.message : String(error);
      return refuse(reply, 502, `sandbox ${to.sandboxId} is not running: ${message}`);
    }
  });
}
