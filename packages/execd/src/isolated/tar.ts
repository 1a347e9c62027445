/** A minimal POSIX tar (ustar, with PAX records for long names) writer for session diffs. */

export interface TarEntry {
  /** Relative path; directories without a trailing slash. */
  path: string;
  type: "file" | "directory" | "symlink";
  mode: number;
  uid: number;
  gid: number;
  mtimeSeconds: number;
  size?: number;
  linkTarget?: string;
}

const block = 512;
const typeFlags = { file: "0", directory: "5", symlink: "2", pax: "x" } as const;

/** The header block(s) of one entry; a file's content and `padding(size)` follow. */
export function tarHeader(entry: TarEntry): Buffer {
  const name = entry.type === "directory" ? `${entry.path}/` : entry.path;
  const link = entry.linkTarget ?? "";
  const pax: string[] = [];
  if (Buffer.byteLength(name) > 100) pax.push(paxRecord("path", name));
  if (Buffer.byteLength(link) > 100) pax.push(paxRecord("linkpath", link));
  const header = ustar({
    name: truncate(name, 100),
    mode: entry.mode & 0o7777,
    uid: entry.uid,
    gid: entry.gid,
    size: entry.type === "file" ? (entry.size ?? 0) : 0,
    mtime: Math.floor(entry.mtimeSeconds),
    type: typeFlags[entry.type],
    link: truncate(link, 100),
  });
  if (pax.length === 0) return header;
  const records = Buffer.from(pax.join(""));
  const paxHeader = ustar({
    name: truncate(`PaxHeader/${name}`, 100),
    mode: 0o644,
    uid: 0,
    gid: 0,
    size: records.length,
    mtime: Math.floor(entry.mtimeSeconds),
    type: typeFlags.pax,
    link: "",
  });
  return Buffer.concat([paxHeader, records, padding(records.length), header]);
}

/** Zero bytes up to the next block boundary after `size` bytes of content. */
export function padding(size: number): Buffer {
  return Buffer.alloc((block - (size % block)) % block);
}

/** Two zero blocks end the archive. */
export const tarEnd = Buffer.alloc(block * 2);

function ustar(fields: {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  type: string;
  link: string;
}): Buffer {
  const header = Buffer.alloc(block);
  header.write(fields.name, 0, 100, "utf8");
  octal(header, 100, 8, fields.mode);
  octal(header, 108, 8, fields.uid);
  octal(header, 116, 8, fields.gid);
  octal(header, 124, 12, fields.size);
  octal(header, 136, 12, fields.mtime);
  header.write("        ", 148, 8, "ascii");
  header.write(fields.type, 156, 1, "ascii");
  header.write(fields.link, 157, 100, "utf8");
  header.write("ustar\u000000", 257, 8, "ascii");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, 8, "ascii");
  return header;
}

function octal(header: Buffer, offset: number, length: number, value: number): void {
  header.write(`${value.toString(8).padStart(length - 1, "0")}\u0000`, offset, length, "ascii");
}

/** A PAX record is "<length> <key>=<value>\n", where the length counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (`${length}`.length + Buffer.byteLength(body) !== length)
    length = `${length}`.length + Buffer.byteLength(body);
  return `${length}${body}`;
}

function truncate(text: string, bytes: number): string {
  const buffer = Buffer.from(text);
  return buffer.length <= bytes
    ? text
    : buffer
        .subarray(0, bytes)
        .toString("utf8")
        .replace(/\uFFFD+$/, "");
}
