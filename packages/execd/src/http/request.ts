import type { IncomingMessage } from "node:http";
import { EXECD_OUTPUT_FRAMING_HEADER } from "@paddock/common/contracts";
import { Errors, PaddockError } from "@paddock/common/errors";
import { isUtf8Query } from "@paddock/common/unicode";
import { fieldPath, invalidField, missingProperty } from "@paddock/common/validation-messages";
import type { OutputFraming } from "../commands/output-framing.js";
import { isRecord, parseJson } from "../json.js";

/** Reads a JSON body of at most `limit` bytes. */
export async function readJson(req: IncomingMessage, limit = 8 * 2 ** 20): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new PaddockError(Errors.payloadTooLarge, `request body exceeds ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  if (body.toString("latin1").trim() === "")
    throw new PaddockError(Errors.invalidRequest, "a JSON body is required");
  return parseJson(body, "the request body");
}

/** A JSON object body, or 400. */
export async function readObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const body = await readJson(req);
  if (!isRecord(body))
    throw new PaddockError(Errors.invalidRequest, invalidField("body", "must be a JSON object"));
  return body;
}

export function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string")
    throw new PaddockError(Errors.invalidRequest, invalidField(fieldPath("body", key), "must be string"));
  return value;
}

export function optionalInteger(body: Record<string, unknown>, key: string, min = 0): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField(fieldPath("body", key), `must be integer >= ${min}`),
    );
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
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField(fieldPath("body", key), "must be an object of strings"),
    );
  }
  return value as Record<string, string>;
}

/**
 * The URL's query parameters, once its escapes are known to be UTF-8: the URL parser would turn
 * `%FF` into U+FFFD, which names another file.
 */
export function searchParams(url: URL): URLSearchParams {
  if (!isUtf8Query(url.search))
    throw new PaddockError(
      Errors.invalidRequest,
      "the query string is not UTF-8 (a percent escape such as %FF)",
    );
  return url.searchParams;
}

/** A path segment (an id) as text; an escape that is not UTF-8 is the caller's mistake, not a 500. */
export function decodePathSegment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new PaddockError(
      Errors.invalidRequest,
      `${text} is not a valid path segment (its percent escapes are not UTF-8)`,
    );
  }
}

/** Query parameter values (repeatable ones as arrays). */
export function queryAll(url: URL, name: string): string[] {
  return searchParams(url).getAll(name);
}

export function queryOne(url: URL, name: string, required = false): string | undefined {
  const value = searchParams(url).get(name) ?? undefined;
  if (required && (value === undefined || value === ""))
    throw new PaddockError(Errors.invalidRequest, missingProperty("query", name));
  return value;
}

/** The framing a request asks for with `X-Paddock-Output-Framing`; lines when absent. */
export function requestedFraming(req: IncomingMessage): OutputFraming {
  const value = req.headers[EXECD_OUTPUT_FRAMING_HEADER.toLowerCase()];
  if (value === undefined || value === "lines") return "lines";
  if (value === "chunks") return "chunks";
  throw new PaddockError(Errors.invalidRequest, `${EXECD_OUTPUT_FRAMING_HEADER} must be lines or chunks`);
}
