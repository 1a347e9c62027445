import { Errors, PaddockError } from "@paddock/common/errors";
import { decodeUtf8, illFormedString } from "@paddock/common/unicode";

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** JSON from a client: UTF-8 bytes, valid JSON, every string of it Unicode text. */
export function parseJson(bytes: Buffer, what: string): unknown {
  const text = decodeUtf8(bytes);
  if (text === undefined)
    throw new PaddockError(Errors.invalidRequest, `${what} is not UTF-8 (JSON is sent as UTF-8)`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new PaddockError(Errors.invalidJson, `${what} is not valid JSON`);
  }
  const illFormed = illFormedString(value);
  if (illFormed !== undefined) throw notUnicode(illFormed);
  return value;
}

/** A string that is not Unicode (a lone UTF-16 surrogate) names no file, argument or variable. */
export function notUnicode(text: string): PaddockError {
  return new PaddockError(
    Errors.invalidRequest,
    `${JSON.stringify(text.slice(0, 40))} is not Unicode text (it holds a lone UTF-16 surrogate)`,
  );
}
