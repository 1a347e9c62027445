/** A piece of a search snippet: plain text, or a match to highlight. */
export interface SnippetPart {
  text: string;
  marked: boolean;
}

const entities: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
};

// One pass, so an escaped entity ("&amp;lt;") decodes to its text ("&lt;"), never further.
function decode(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => entities[entity] as string);
}

/**
 * The parts of a GET /memory/search snippet (HTML-escaped text with `<mark>`…`</mark>` around the
 * matches) as text to render as text: no HTML is ever interpreted.
 */
export function highlightedParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  let marked = false;
  for (const piece of snippet.split(/(<mark>|<\/mark>)/)) {
    if (piece === "<mark>" || piece === "</mark>") {
      marked = piece === "<mark>";
    } else if (piece) {
      parts.push({ text: decode(piece), marked });
    }
  }
  return parts;
}
