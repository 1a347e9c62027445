import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { PaddockError } from "@paddock/common/errors";
import { decodeUtf8, illFormedString } from "@paddock/common/unicode";
import { sendJson } from "../http/answers.js";
import type { Route } from "../http/router.js";
import { isRecord } from "../json.js";
import { drained } from "../streams/backpressure.js";

/**
 * The Connect protocol (connectrpc.com/docs/protocol) with JSON messages, as E2B's SDKs speak it
 * to envd: unary calls are a JSON body answered by a JSON body, server streams are length-prefixed
 * envelopes (1 flag byte, 4 bytes big-endian length, the JSON) ended by an end-of-stream envelope.
 */

export type ConnectCode =
  | "canceled"
  | "unknown"
  | "invalid_argument"
  | "deadline_exceeded"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "resource_exhausted"
  | "failed_precondition"
  | "aborted"
  | "out_of_range"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "data_loss"
  | "unauthenticated";

/** The HTTP status a unary error answers with (the protocol's table). */
const statusOf: Record<ConnectCode, number> = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
};

/** The HTTP status that stands for `code`; envd's plain HTTP routes answer their errors with it too. */
export function httpStatusOf(code: ConnectCode): number {
  return statusOf[code];
}

export class ConnectError extends Error {
  constructor(
    readonly code: ConnectCode,
    message: string,
    /** An HTTP status other than the code's: the protocol's 415 for a codec not served. */
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

/** What a handler knows about its call. */
export interface CallContext {
  /** The user named by `Authorization: Basic base64(user:)`, as envd reads it. */
  user: string | undefined;
  headers: IncomingHttpHeaders;
  /** Aborted when the client goes away or the call's deadline (`Connect-Timeout-Ms`) passes. */
  signal: AbortSignal;
}

export type Message = Record<string, unknown>;
export type UnaryHandler = (request: Message, context: CallContext) => Promise<Message> | Message;
/** Sends messages with `send` (which waits while the client's socket is full) and returns at the end. */
export type StreamHandler = (
  request: Message,
  context: CallContext,
  send: (message: Message) => Promise<void>,
) => Promise<void>;

export interface ConnectService {
  unary?: Record<string, UnaryHandler>;
  stream?: Record<string, StreamHandler>;
}

const maxRequestBytes = 16 * 2 ** 20;
const endStreamFlag = 0x02;

/** The routes of one Connect service under `prefix`: `POST {prefix}/{service}/{Method}`. */
export function connectRoutes(prefix: string, serviceName: string, service: ConnectService): Route[] {
  const routes: Route[] = [];
  const path = (method: string) => new RegExp(`^${prefix}/${serviceName.replaceAll(".", "\\.")}/${method}$`);
  for (const [method, handler] of Object.entries(service.unary ?? {})) {
    routes.push({
      method: "POST",
      pattern: path(method),
      handler: (req, res) => serveUnary(req, res, handler),
    });
  }
  for (const [method, handler] of Object.entries(service.stream ?? {})) {
    routes.push({
      method: "POST",
      pattern: path(method),
      handler: (req, res) => serveStream(req, res, handler),
    });
  }
  return routes;
}

/** Any error a handler throws, as the Connect error the client should see. */
export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof PaddockError) {
    const byStatus: Record<number, ConnectCode> = {
      400: "invalid_argument",
      401: "unauthenticated",
      403: "permission_denied",
      404: "not_found",
      409: "already_exists",
      413: "resource_exhausted",
      501: "unimplemented",
    };
    return new ConnectError(byStatus[error.status] ?? "internal", error.message);
  }
  const code = (error as NodeJS.ErrnoException).code;
  const byErrno: Record<string, ConnectCode> = {
    ENOENT: "not_found",
    EEXIST: "already_exists",
    EACCES: "permission_denied",
    EPERM: "permission_denied",
    ENOTDIR: "invalid_argument",
    EISDIR: "invalid_argument",
    EINVAL: "invalid_argument",
    ENAMETOOLONG: "invalid_argument",
    ELOOP: "invalid_argument",
    ENOTEMPTY: "failed_precondition",
    EBUSY: "failed_precondition",
    EXDEV: "failed_precondition",
    ENOSPC: "resource_exhausted",
    ERR_INVALID_ARG_VALUE: "invalid_argument",
  };
  const mapped = code ? byErrno[code] : undefined;
  if (mapped) return new ConnectError(mapped, (error as Error).message);
  return new ConnectError("internal", error instanceof Error ? error.message : String(error));
}

/** The user of `Authorization: Basic base64(user:)`, or undefined. */
export function userOf(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(headers.authorization ?? "");
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, "base64").toString("utf8");
  const user = decoded.slice(0, decoded.includes(":") ? decoded.indexOf(":") : undefined);
  return user || undefined;
}

/** Node's timers wait at most this long; a longer one would fire at once. */
const maxTimerMs = 2 ** 31 - 1;

/**
 * A call's deadline from `Connect-Timeout-Ms`: none when absent or beyond what a timer can wait
 * (24.8 days, longer than any sandbox lives).
 */
export function timeoutOf(headers: IncomingHttpHeaders): number | undefined {
  const timeoutMs = Number(headers["connect-timeout-ms"]);
  return Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= maxTimerMs ? timeoutMs : undefined;
}

/** Keepalive period when the client names none (E2B's SDKs ask for 50 s), and the longest. */
const defaultKeepaliveSeconds = 50;
const maxKeepaliveSeconds = 3600;

/**
 * How often a stream sends a keepalive: the period the client asks for in
 * `Keepalive-Ping-Interval` (seconds), bounded. Keepalives keep proxies from closing a stream that
 * has nothing to say for a while.
 */
export function keepaliveMs(headers: IncomingHttpHeaders): number {
  const asked = Number(headers["keepalive-ping-interval"]);
  const seconds =
    Number.isFinite(asked) && asked >= 1 ? Math.min(asked, maxKeepaliveSeconds) : defaultKeepaliveSeconds;
  return seconds * 1000;
}

function contextOf(req: IncomingMessage, res: ServerResponse): { context: CallContext; done(): void } {
  const controller = new AbortController();
  const onClose = () => controller.abort(new ConnectError("canceled", "the client went away"));
  res.on("close", onClose);
  const timeoutMs = timeoutOf(req.headers);
  const deadline =
    timeoutMs !== undefined
      ? setTimeout(
          () =>
            controller.abort(
              new ConnectError("deadline_exceeded", `the call's deadline of ${timeoutMs} ms passed`),
            ),
          timeoutMs,
        )
      : undefined;
  return {
    context: { user: userOf(req.headers), headers: req.headers, signal: controller.signal },
    done() {
      res.off("close", onClose);
      clearTimeout(deadline);
    },
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxRequestBytes)
      throw new ConnectError("resource_exhausted", `request body exceeds ${maxRequestBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseMessage(bytes: Buffer): Message {
  const text = decodeUtf8(bytes);
  if (text === undefined) throw new ConnectError("invalid_argument", "the request message is not UTF-8");
  let value: unknown;
  try {
    value = bytes.length === 0 ? {} : JSON.parse(text);
  } catch {
    throw new ConnectError("invalid_argument", "the request message is not valid JSON");
  }
  if (!isRecord(value))
    throw new ConnectError("invalid_argument", "the request message must be a JSON object");
  const illFormed = illFormedString(value);
  if (illFormed !== undefined)
    throw new ConnectError(
      "invalid_argument",
      `${JSON.stringify(illFormed.slice(0, 40))} is not Unicode text (it holds a lone UTF-16 surrogate)`,
    );
  return value;
}

function errorBody(error: ConnectError) {
  return { code: error.code, message: error.message };
}

async function serveUnary(req: IncomingMessage, res: ServerResponse, handler: UnaryHandler): Promise<void> {
  const { context, done } = contextOf(req, res);
  let status = 200;
  let body: unknown;
  try {
    requireCodec(req, "application/json");
    body = await raceAbort(handler(parseMessage(await readBody(req)), context), context.signal);
  } catch (error) {
    const failure = toConnectError(error);
    status = failure.httpStatus ?? statusOf[failure.code];
    body = errorBody(failure);
  } finally {
    done();
  }
  if (res.destroyed) return;
  sendJson(res, status, body);
}

/**
 * Only the JSON codecs are served: `type` is the one this kind of call is sent with. Another is
 * the client's mistake, which the protocol answers with 415 Unsupported Media Type (not a 5xx).
 */
function requireCodec(req: IncomingMessage, type: string): void {
  if (!(req.headers["content-type"] ?? "").startsWith(type))
    throw new ConnectError("unimplemented", `only the JSON codec is served (Content-Type: ${type})`, 415);
}

function envelope(flags: number, message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message), "utf8");
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** The one message of a server-stream request (a single envelope). */
function firstEnvelope(bytes: Buffer): Message {
  if (bytes.length < 5) throw new ConnectError("invalid_argument", "the request is not an enveloped message");
  const length = bytes.readUInt32BE(1);
  // No compression is offered, so a message flagged compressed (or a body that is no envelope
  // at all, its first byte read as flags) is the client's mistake.
  if ((bytes.readUInt8(0) & 0x01) !== 0)
    throw new ConnectError("invalid_argument", "compressed request messages are not served");
  if (bytes.length < 5 + length)
    throw new ConnectError("invalid_argument", "the request envelope is cut short");
  return parseMessage(bytes.subarray(5, 5 + length));
}

async function serveStream(req: IncomingMessage, res: ServerResponse, handler: StreamHandler): Promise<void> {
  const { context, done } = contextOf(req, res);
  let request: Message;
  try {
    requireCodec(req, "application/connect+json");
    request = firstEnvelope(await readBody(req));
  } catch (error) {
    done();
    const failure = toConnectError(error);
    res.writeHead(failure.httpStatus ?? statusOf[failure.code], { "content-type": "application/json" });
    res.end(JSON.stringify(errorBody(failure)));
    return;
  }
  res.writeHead(200, { "content-type": "application/connect+json" });
  res.flushHeaders();
  const send = async (message: Message) => {
    if (context.signal.aborted) throw context.signal.reason;
    if (!res.write(envelope(0, message))) await drained(res);
  };
  let end: Message = {};
  try {
    await raceAbort(handler(request, context, send), context.signal);
  } catch (error) {
    end = { error: errorBody(toConnectError(error)) };
  } finally {
    done();
  }
  if (!res.destroyed) res.end(envelope(endStreamFlag, end));
}

/** Settles with the handler, or rejects with the abort reason when the call is cancelled first. */
function raceAbort<T>(work: Promise<T> | T, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    Promise.resolve(work).then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
