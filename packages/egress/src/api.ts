import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { EGRESS_TOKEN_HEADER } from "@paddock/common/contracts";
import {
  mergeRules,
  type NetworkPolicy,
  parsePolicy,
  policyMode,
  removeRules,
} from "@paddock/common/egress-policy";
import { Errors, isPaddockError, PaddockError } from "@paddock/common/errors";
import { safeEqual } from "@paddock/common/ids";
import type { Enforcer } from "./enforcer.js";

/** Bodies above this answer 413 before they are parsed (1000 long rules fit well within it). */
export const MAX_BODY_BYTES = 512 * 1024;
/** The header upstream OpenSandbox clients send; accepted beside Paddock's own. */
const UPSTREAM_TOKEN_HEADER = "opensandbox-egress-auth";

export interface ApiOptions {
  enforcer: Enforcer;
  /** Undefined: the runtime gave no token, so nobody may change the policy. */
  token: string | undefined;
  ready(): boolean;
  log(event: string, fields: Record<string, unknown>): void;
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

function status(policy: NetworkPolicy) {
  return { status: "ok", mode: policyMode(policy), enforcementMode: "dns+nft", policy };
}

function readBody(request: IncomingMessage): Promise<unknown> {
  const type = request.headers["content-type"];
  if (type && !/^application\/(merge-patch\+)?json\b/i.test(type)) {
    return Promise.reject(new PaddockError(Errors.unsupportedMediaType, "send the body as application/json"));
  }
  if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
    return Promise.reject(
      new PaddockError(Errors.payloadTooLarge, `bodies are limited to ${MAX_BODY_BYTES} bytes`),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is read and dropped, so the client still gets its 413.
      if (size > MAX_BODY_BYTES) {
        chunks.length = 0;
        reject(new PaddockError(Errors.payloadTooLarge, `bodies are limited to ${MAX_BODY_BYTES} bytes`));
      } else chunks.push(chunk);
    });
    request.on("error", reject);
    request.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new PaddockError(Errors.invalidJson, "the body is not valid JSON"));
      }
    });
  });
}

function authorised(request: IncomingMessage, token: string | undefined): boolean {
  const given = request.headers[EGRESS_TOKEN_HEADER.toLowerCase()] ?? request.headers[UPSTREAM_TOKEN_HEADER];
  return token !== undefined && typeof given === "string" && safeEqual(given, token);
}

async function route(options: ApiOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? "/").split("?")[0];
  if (path === "/healthz") {
    if (request.method !== "GET" && request.method !== "HEAD")
      throw new PaddockError(Errors.methodNotAllowed);
    send(response, options.ready() ? 200 : 503, { status: options.ready() ? "ok" : "starting" });
    return;
  }
  if (path !== "/policy") throw new PaddockError(Errors.notFound, `no route ${path}`);
  if (!authorised(request, options.token)) {
    throw new PaddockError(Errors.unauthorized, `send the sandbox's egress token in ${EGRESS_TOKEN_HEADER}`);
  }
  const { enforcer } = options;
  switch (request.method) {
    case "GET":
      send(response, 200, status(enforcer.current()));
      return;
    case "PUT": {
      // Paddock's addition to the wire contract: the whole policy, default action included,
      // replaced in one step (E2B's network update replaces everything at once).
      const policy = parsePolicy(await readBody(request));
      send(response, 200, status(await enforcer.update(() => policy)));
      return;
    }
    case "PATCH": {
      const body = await readBody(request);
      send(response, 200, status(await enforcer.update((policy) => mergeRules(policy, body))));
      return;
    }
    case "DELETE": {
      const body = await readBody(request);
      send(response, 200, status(await enforcer.update((policy) => removeRules(policy, body))));
      return;
    }
    default:
      response.setHeader("allow", "GET, PUT, PATCH, DELETE");
      throw new PaddockError(Errors.methodNotAllowed, `${request.method} is not allowed on /policy`);
  }
}

/** The policy API: GET/PUT/PATCH/DELETE /policy (token required) and GET /healthz (open). */
export function createApi(options: ApiOptions): Server {
  return createServer((request, response) => {
    route(options, request, response).catch((error: unknown) => {
      const known = isPaddockError(error) ? error : undefined;
      if (!known) options.log("api_error", { error: (error as Error).message });
      const failure =
        known ?? new PaddockError(Errors.internal, "the policy could not be applied; it is unchanged");
      if (failure.status === 413) response.setHeader("connection", "close");
      if (!response.headersSent)
        send(response, failure.status, { code: failure.code, message: failure.message });
    });
  });
}
