import { createHmac } from "node:crypto";
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Errors, PaddockError, safeEqual } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import {
  accessTokenHeader,
  forwardHttp,
  type ProxyRoute,
  sandboxStillThere,
  streamingBodies,
} from "@paddock/runtime-api";
import type { FastifyRequest } from "fastify";
import { authenticate, principalOf } from "../../http/auth-hook.js";
import { errorResponses } from "../../http/error-schemas.js";
import type { Identity } from "../../identity/identity.js";
import { EndpointParams, EndpointQuery, PublicEndpoint } from "../schemas/endpoints.js";

export const defaultEndpointLifetimeSeconds = 3600;

const proxyPath = /^\/sandboxes\/([a-z0-9-]{1,128})\/ports\/(\d{1,5})(\/[^?]*)?(?:\?(.*))?$/;
/** `<expires>.<signature>`: the first path segment after the port, or the access-token header. */
const tokenSegment = /^\/(\d{1,12}\.[A-Za-z0-9_-]{43})(?=\/|$)/;

function signature(secretKey: string, sandboxId: string, port: number, expires: number): string {
  return createHmac("sha256", secretKey)
    .update(`endpoint\n${sandboxId}\n${port}\n${expires}`)
    .digest("base64url");
}

/** A token that opens one port of one sandbox until `expires` (Unix seconds). */
export function issueEndpointToken(secretKey: string, sandboxId: string, port: number, expires: number) {
  return `${expires}.${signature(secretKey, sandboxId, port, expires)}`;
}

/** Splits a proxy URL into sandbox, port, the token in its path (if any) and the in-sandbox path. */
function parse(url: string) {
  const found = proxyPath.exec(url);
  const port = Number(found?.[2]);
  if (!found || port < 1 || port > 65535) return undefined;
  let rest = found[3] ?? "/";
  const token = tokenSegment.exec(rest)?.[1];
  if (token) rest = rest.slice(token.length + 1) || "/";
  return {
    sandboxId: found[1] as string,
    port,
    token,
    path: rest + (found[4] !== undefined ? `?${found[4]}` : ""),
  };
}

/** The URL with its signed token replaced, fit for a log line. */
export function redactEndpointUrl(url: string): string {
  return url.replace(/(\/ports\/\d{1,5}\/)\d{1,12}\.[A-Za-z0-9_-]{43}/, "$1[redacted]");
}

/**
 * Public endpoints: `/sandboxes/{id}/ports/{port}/{expires}.{signature}/…`, or the same path
 * without the token segment and the token in `X-Paddock-Access-Token`. The signed token is the
 * credential, so a browser can open the URL (HTTP and WebSocket); it names one port of one
 * sandbox and stops working when it expires or the sandbox goes. A signature that does not match
 * the sandbox answers 404, like every other route asked about another account's sandbox.
 */
export function publicEndpointRoute(sandboxes: SandboxOperations, secretKey: string): ProxyRoute {
  return {
    match(req) {
      const parsed = parse(req.url ?? "");
      return parsed && { sandboxId: parsed.sandboxId, port: parsed.port, path: parsed.path };
    },
    async resolve(req, sandboxId, port) {
      const header = req.headers[accessTokenHeader.toLowerCase()];
      const token = parse(req.url ?? "")?.token ?? (typeof header === "string" ? header : undefined);
      if (!token) {
        throw new PaddockError(
          Errors.unauthorized,
          "open the URL from GET /sandboxes/{id}/endpoints/{port}, or send its token in X-Paddock-Access-Token",
        );
      }
      const [expiresText = "", signed = ""] = token.split(".");
      const expires = Number(expiresText);
      if (!safeEqual(signed, signature(secretKey, sandboxId, port, expires))) {
        throw new PaddockError(Errors.sandboxNotFound, `no sandbox ${sandboxId}`);
      }
      if (expires * 1000 < Date.now()) {
        throw new PaddockError(Errors.unauthorized, "this endpoint URL has expired; ask for a new one");
      }
      return {
        ...(await sandboxes.target(sandboxId, port)),
        stillThere: sandboxStillThere(sandboxes, sandboxId),
      };
    },
  };
}

export interface EndpointRoutesOptions {
  identity: Identity;
  sandboxes: SandboxOperations;
  secretKey: string;
  publicUrl: () => string;
}

export const endpointRoutes: FastifyPluginAsyncTypebox<EndpointRoutesOptions> = async (app, options) => {
  const route = publicEndpointRoute(options.sandboxes, options.secretKey);

  await app.register(async (scope) => {
    const authenticated = scope.withTypeProvider<TypeBoxTypeProvider>();
    authenticated.addHook("onRequest", authenticate(options.identity, "sandboxes"));
    authenticated.get(
      "/sandboxes/:id/endpoints/:port",
      {
        schema: {
          tags: ["sandboxes"],
          params: EndpointParams,
          querystring: EndpointQuery,
          response: { 200: PublicEndpoint, ...errorResponses },
        },
      },
      async (request) => {
        const { id, port } = request.params;
        const sandbox = await options.sandboxes.get(id, principalOf(request).accountId);
        const lifetime = request.query.expiresInSeconds ?? defaultEndpointLifetimeSeconds;
        const expires = Math.floor(Date.now() / 1000) + lifetime;
        const token = issueEndpointToken(options.secretKey, sandbox.id, port, expires);
        return {
          url: `${options.publicUrl().replace(/\/$/, "")}/sandboxes/${sandbox.id}/ports/${port}/${token}/`,
          token,
          expiresAt: new Date(expires * 1000).toISOString(),
        };
      },
    );
  });

  // The proxy: no account authentication (the signed token is the credential), bodies streamed,
  // and the token kept out of the request log.
  await app.register(async (proxy) => {
    streamingBodies(proxy);
    const logSerializers = {
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: redactEndpointUrl(request.url),
        remoteAddress: request.ip,
      }),
    };
    const handle = (request: FastifyRequest, reply: Parameters<typeof forwardHttp>[2]) =>
      forwardHttp(route, request, reply);
    proxy.all("/sandboxes/:id/ports/:port", { logSerializers }, handle);
    proxy.all("/sandboxes/:id/ports/:port/*", { logSerializers }, handle);
  });
};
