import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeUtf8, illFormedString, isUtf8Query } from "@paddock/common/unicode";
import { fieldPath, invalidField, missingProperty } from "@paddock/common/validation-messages";

/** An error a handler throws to answer `{code, message}` with a status. */
export class ExecdError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ExecdError(400, "invalid_request", message);
/** A missing file, or a route execd does not have. */
export const notFound = (message: string) => new ExecdError(404, "not_found", message);
/** What a client names by id: a code context, a session, a command. Files are `not_found`. */
export const contextNotFound = (message: string) => new ExecdError(404, "context_not_found", message);
export const sessionNotFound = (message: string) => new ExecdError(404, "session_not_found", message);
export const commandNotFound = (message: string) => new ExecdError(404, "command_not_found", message);

/** What a caller's request id may look like to be sent back: visible ASCII, bounded. */
const acceptableRequestId = /^[\x21-\x7e]{1,128}$/;

/** Answers carry the caller's `X-Request-ID` back, as OpenSandbox's execd does. */
export function echoRequestId(req: IncomingMessage, res: ServerResponse): void {
  const sent = req.headers["x-request-id"];
  if (typeof sent === "string" && acceptableRequestId.test(sent)) res.setHeader("x-request-id", sent);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof ExecdError) {
    sendJson(res, error.status, { code: error.code, message: error.message });
    return;
  }
  const nodeError = error as NodeJS.ErrnoException;
  // Node refuses a path or an argument holding a NUL before any system call sees it.
  if (nodeError.code === "ERR_INVALID_ARG_VALUE" && nodeError.message.includes("null bytes")) {
    sendJson(res, 400, { code: "invalid_request", message: "paths and commands cannot contain a NUL byte" });
    return;
  }
  // Filesystem errors are the caller's path problems, not server faults.
  const byErrno: Record<string, [number, string]> = {
    ENOENT: [404, "not_found"],
    ENOTDIR: [400, "not_a_directory"],
    EISDIR: [400, "is_a_directory"],
    EEXIST: [409, "already_exists"],
    EACCES: [403, "permission_denied"],
    EPERM: [403, "permission_denied"],
    ENOTEMPTY: [409, "directory_not_empty"],
    EINVAL: [400, "invalid_request"],
    ENAMETOOLONG: [400, "invalid_request"],
    ELOOP: [400, "invalid_request"],
  };
  const mapped = nodeError.code ? byErrno[nodeError.code] : undefined;
  if (mapped) {
    sendJson(res, mapped[0], { code: mapped[1], message: nodeError.message });
    return;
  }
  sendJson(res, 500, { code: "internal_error", message: "execd failed to handle the request" });
}

/** Reads a JSON body of at most `limit` bytes. */
export async function readJson(req: IncomingMessage, limit = 8 * 2 ** 20): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ExecdError(413, "payload_too_large", `request body exceeds ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  if (body.toString("latin1").trim() === "") throw badRequest("a JSON body is required");
  return parseJson(body, "the request body");
}

/** JSON from a client: UTF-8 bytes, valid JSON, every string of it Unicode text. */
export function parseJson(bytes: Buffer, what: string): unknown {
  const text = decodeUtf8(bytes);
  if (text === undefined) throw badRequest(`${what} is not UTF-8 (JSON is sent as UTF-8)`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ExecdError(400, "invalid_json", `${what} is not valid JSON`);
  }
  const illFormed = illFormedString(value);
  if (illFormed !== undefined) throw notUnicode(illFormed);
  return value;
}

/** A string that is not Unicode (a lone UTF-16 surrogate) names no file, argument or variable. */
export function notUnicode(text: string): ExecdError {
  return badRequest(
    `${JSON.stringify(text.slice(0, 40))} is not Unicode text (it holds a lone UTF-16 surrogate)`,
  );
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON object body, or 400. */
export async function readObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const body = await readJson(req);
  if (!isRecord(body)) throw badRequest(invalidField("body", "must be a JSON object"));
  return body;
}

export function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw badRequest(invalidField(fieldPath("body", key), "must be string"));
  return value;
}

export function optionalInteger(body: Record<string, unknown>, key: string, min = 0): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw badRequest(invalidField(fieldPath("body", key), `must be integer >= ${min}`));
  }
  return value;
}

export function optionalStringMap(
  body: Record<string, unknown>,
  key: string,
): Record<string, string> | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === "string")) {
    throw badRequest(invalidField(fieldPath("body", key), "must be an object of strings"));
  }
  return value as Record<string, string>;
}

/**
 * The URL's query parameters, once its escapes are known to be UTF-8: the URL parser would turn
 * `%FF` into U+FFFD, which names another file.
 */
export function searchParams(url: URL): URLSearchParams {
  if (!isUtf8Query(url.search))
    throw badRequest("the query string is not UTF-8 (a percent escape such as %FF)");
  return url.searchParams;
}

/** A path segment (an id) as text; an escape that is not UTF-8 is the caller's mistake, not a 500. */
export function decodePathSegment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest(`${text} is not a valid path segment (its percent escapes are not UTF-8)`);
  }
}

/** Query parameter values (repeatable ones as arrays). */
export function queryAll(url: URL, name: string): string[] {
  return searchParams(url).getAll(name);
}

export function queryOne(url: URL, name: string, required = false): string | undefined {
  const value = searchParams(url).get(name) ?? undefined;
  if (required && (value === undefined || value === "")) throw badRequest(missingProperty("query", name));
  return value;
}
