/**
 * Turning a user's search text into something both full-text engines accept. The text is never
 * handed to a query parser as typed: only its words are kept (letters and digits), and the query
 * is rebuilt from them, so quotes, operators, `*`, `NEAR`, parentheses or column filters are just
 * separators and can neither fail nor widen a search.
 */

/** More words than this add little to ranking and cost a lot on a large index. */
export const maxSearchTerms = 16;

/** Unique, lower-cased words of the text, in order, at most `maxSearchTerms`. */
export function searchTerms(text: string): string[] {
  const words =
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, maxSearchTerms);
}

/** FTS5 MATCH expression: every word a quoted string, any of them may match (bm25 ranks). */
export function fts5Query(terms: readonly string[]): string {
  return terms.map((term) => `"${term}"`).join(" OR ");
}

/** to_tsquery text: words only (no operator characters survive `searchTerms`), any may match. */
export function tsQuery(terms: readonly string[]): string {
  return terms.join(" | ");
}

/** Where the engine marks a match in a snippet; private-use characters, rare in real text. */
export const highlightStart = "\uE000";
export const highlightEnd = "\uE001";

const htmlEntities: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * A snippet safe to show as HTML: the stored text escaped, the engine's match markers turned
 * into `<mark>`…`</mark>`. No other tag can appear, whatever the stored content holds.
 */
export function renderSnippet(marked: string): string {
  return marked
    .replace(/[&<>"']/g, (character) => htmlEntities[character] as string)
    .replaceAll(highlightStart, "<mark>")
    .replaceAll(highlightEnd, "</mark>");
}
