/**
 * Strings in URLs, passed through as the caller gave them, so the server judges a string in a
 * query or a path as it judges the same string in a JSON body. A lone UTF-16 surrogate (`"\ud800"`)
 * is not Unicode text: `encodeURIComponent` throws on it and `URLSearchParams` silently turns it
 * into U+FFFD, which names another file. Here it is sent as the three bytes it would take in
 * UTF-8, which are not UTF-8, and the server answers `invalid_unicode` as it does for the JSON.
 */
/** Under the `u` flag a surrogate pair reads as one code point, so only a lone one matches. */
const loneSurrogate = /\p{Cs}/u;

export function encodePart(text: string): string {
  if (!loneSurrogate.test(text)) return encodeURIComponent(text);
  let encoded = "";
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      const bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
      encoded += bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join("");
    } else encoded += encodeURIComponent(char);
  }
  return encoded;
}

type QueryValue = string | number | boolean | undefined | readonly string[];

/** `?name=value&…` of the defined parameters (a list repeats its name), or "" when there are none. */
export function queryOf(parameters: Record<string, QueryValue>): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(parameters)) {
    if (value === undefined) continue;
    for (const item of typeof value === "object" ? value : [String(value)])
      pairs.push(`${encodePart(name)}=${encodePart(item)}`);
  }
  return pairs.length ? `?${pairs.join("&")}` : "";
}
