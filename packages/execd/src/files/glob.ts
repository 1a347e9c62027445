/**
 * Glob patterns as regular expressions over paths relative to the search root:
 * `**` any number of directories, `*` and `?` within one segment, `[abc]` and `[!abc]` classes,
 * `{a,b}` alternatives, each a glob itself (`{*.txt,*.md}`). A pattern without a slash matches
 * the file name at any depth, as OpenSandbox's execd matches it against each file's base name.
 */
export function globToRegExp(pattern: string): RegExp {
  const source = pattern.includes("/") ? pattern : `**/${pattern}`;
  return new RegExp(`^${translate(source)}$`);
}

function translate(source: string): string {
  let out = "";
  for (let i = 0; i < source.length; i++) {
    const char = source[i] as string;
    if (char === "*") {
      if (source[i + 1] === "*") {
        const slash = source[i + 2] === "/";
        out += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else {
        out += "[^/]*";
      }
    } else if (char === "?") {
      out += "[^/]";
    } else if (char === "[") {
      const close = source.indexOf("]", i + 1);
      if (close < 0) out += "\\[";
      else {
        const body = source
          .slice(i + 1, close)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        out += `[${body}]`;
        i = close;
      }
    } else if (char === "{") {
      const close = closingBrace(source, i);
      if (close < 0) out += "\\{";
      else {
        out += `(?:${alternatives(source.slice(i + 1, close))
          .map(translate)
          .join("|")})`;
        i = close;
      }
    } else {
      out += escapeRegExp(char);
    }
  }
  return out;
}

/** The index of the `}` closing the `{` at `open`, counting nested braces; -1 if none. */
function closingBrace(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    if (source[i] === "{") depth++;
    else if (source[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** `a,{b,c},d` → `a`, `{b,c}`, `d`: commas inside nested braces stay. */
function alternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "{") depth++;
    else if (body[i] === "}") depth--;
    else if (body[i] === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
