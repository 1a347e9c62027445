/**
 * Text from a client is Unicode or it is refused: one check for every surface. A JSON string may
 * hold a lone UTF-16 surrogate (`"\ud800"`), and bytes in a body or a query may not be UTF-8;
 * neither names anything a file system, a process or a database can hold. Left alone they fail
 * deep inside (`encodeURIComponent` throws) or are silently turned into U+FFFD, which names a
 * different file.
 */

/** A surrogate code point not in a pair: under the `u` flag, pairs are read as one code point. */
const loneSurrogate = /\p{Cs}/u;

/** Whether `text` is well-formed UTF-16 (`String.prototype.isWellFormed`). */
export function isWellFormed(text: string): boolean {
  return !loneSurrogate.test(text);
}

/** The first string of a parsed JSON value (object keys included) that is not well-formed. */
export function illFormedString(value: unknown): string | undefined {
  if (typeof value === "string") return isWellFormed(value) ? undefined : value;
  if (typeof value !== "object" || value === null) return undefined;
  const entries = Array.isArray(value) ? value.map((item) => ["", item] as const) : Object.entries(value);
  for (const [key, item] of entries) {
    if (!isWellFormed(key)) return key;
    const found = illFormedString(item);
    if (found !== undefined) return found;
  }
  return undefined;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 bytes as text, or undefined when they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Whether the bytes a URL's query stands for (its percent escapes decoded) are UTF-8. URL
 * parsers differ on an escape such as `%FF`: WHATWG's gives U+FFFD, Fastify's keeps `%FF` as text.
 * A `%` that starts no escape is a plain character to both, and so here.
 */
export function isUtf8Query(url: string): boolean {
  const start = url.indexOf("?");
  if (start < 0) return true;
  try {
    // decodeURIComponent refuses escapes that are not UTF-8, encoded surrogates included.
    return isWellFormed(decodeURIComponent(url.slice(start + 1).replace(/%(?![0-9a-fA-F]{2})/g, "%25")));
  } catch {
    return false;
  }
}
