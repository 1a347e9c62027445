/**
 * Glob patterns as regular expressions over paths relative to the search root:
 * `**` any number of directories, `*` and `?` within one segment, `[abc]` classes,
 * `{a,b}` alternatives. A pattern without a slash matches the file name at any depth.
 */
export function globToRegExp(pattern: string): RegExp {
  const source = pattern.includes("/") ? pattern : `**/${pattern}`;
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
      const close = source.indexOf("}", i + 1);
      if (close < 0) out += "\\{";
      else {
        const options = source
          .slice(i + 1, close)
          .split(",")
          .map(escapeRegExp);
        out += `(?:${options.join("|")})`;
        i = close;
      }
    } else {
      out += escapeRegExp(char);
    }
  }
  return new RegExp(`^${out}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+^${}()|[\]\\]/g, "\\$&");
}
