import type { Stats } from "node:fs";
import { appendFile, lstat, mkdir, readFile, realpath, rename, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ConnectError } from "./connect.js";

/** User-defined metadata of a file (envd 0.6.2): keys lowercased, keys and values printable ASCII. */
export type Metadata = Record<string, string>;

const headerPrefix = "x-metadata-";
/** envd counts each key with its xattr namespace, `user.e2b.`, against the per-file budget. */
const namespaceBytes = "user.e2b.".length;
/** envd's limits: a key's xattr name within Linux's 255 bytes, a file's metadata within 4 KiB. */
const maxKeyBytes = 255 - namespaceBytes;
const maxFileBytes = 4096;
const printable = /^[\x20-\x7e]*$/;
/** What one sandbox's store holds at most, so that execd's memory stays bounded. */
const storeLimits = { files: 50_000, bytes: 16 * 2 ** 20 };

/**
 * The metadata an upload sets, from its `X-Metadata-<key>: <value>` headers as envd reads them
 * (specs/e2b/envd/envd.yaml): keys lowercased, the first of repeated headers, printable ASCII only,
 * within envd's size limits. No such header: the upload clears the file's metadata.
 */
export function metadataFromHeaders(headers: NodeJS.Dict<string[]>): Metadata {
  const metadata: Metadata = {};
  let bytes = 0;
  for (const [name, values] of Object.entries(headers)) {
    if (!name.startsWith(headerPrefix)) continue;
    const key = name.slice(headerPrefix.length);
    const value = values?.[0] ?? "";
    if (!key) throw new ConnectError("invalid_argument", "a metadata header needs a key: X-Metadata-<key>");
    if (!printable.test(key) || !printable.test(value))
      throw new ConnectError(
        "invalid_argument",
        `metadata key '${key}' and its value must be printable US-ASCII (0x20-0x7E)`,
      );
    if (key.length > maxKeyBytes)
      throw new ConnectError("invalid_argument", `metadata key '${key}' is longer than ${maxKeyBytes} bytes`);
    bytes += namespaceBytes + key.length + value.length;
    if (bytes > maxFileBytes)
      throw new ConnectError(
        "invalid_argument",
        `a file's metadata is limited to ${maxFileBytes} bytes (keys with their 'user.e2b.' prefix, and values)`,
      );
    metadata[key] = value;
  }
  return metadata;
}

interface Entry {
  /** The path the file was last written or moved to through envd, as the filesystem resolves it. */
  path: string;
  /** Its birth time, where the filesystem keeps one (0 under gVisor): tells a reused inode apart. */
  birth: number;
  metadata: Metadata;
}

type Line =
  | { set: string; path: string; birth: number; metadata: Metadata }
  | { drop: string }
  | { move: string; path: string };

function size(entry: Entry): number {
  return (
    entry.path.length +
    Object.entries(entry.metadata).reduce((sum, [key, value]) => sum + key.length + value.length, 0)
  );
}

/** A metadata map as the log holds it: read back from a file the sandbox could have written. */
function isMetadata(value: unknown): value is Metadata {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === "string")
  );
}

function identity(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

function below(path: string, root: string): boolean {
  return path === root || path.startsWith(root === "/" ? "/" : `${root}/`);
}

/**
 * File metadata kept by execd, not in extended attributes: gVisor refuses `user.*` xattrs on its
 * root filesystem (EOPNOTSUPP) and Node has no xattr call, so one store serves every runtime.
 *
 * A file is known by its inode, as an xattr would be: renames and hard links keep its metadata, a
 * copy has none. An inode number is reused once its file is deleted, so an entry also names the
 * file's birth time and holds only while that matches; where the filesystem has no birth time
 * (gVisor's), only at the path envd last wrote or moved the file to. envd's own moves and removals
 * update the store; a file deleted by another program leaves an entry that no longer matches.
 *
 * Kept in a log of changes (JSON lines), rewritten when mostly stale, so that a restarted execd
 * finds the metadata again; without a file, in memory only. Bounded in files and bytes.
 */
export class FileMetadataStore {
  private entries: Map<string, Entry> | undefined;
  private loading: Promise<Map<string, Entry>> | undefined;
  private lines = 0;
  /** What the entries hold, roughly in bytes: bounded, as execd's memory must be. */
  private bytes = 0;
  /** Changes are written one after another, in the order they were made. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file?: string,
    private readonly limits = storeLimits,
  ) {}

  /** The metadata of the entry `stats` describes (lstat of `path`), if it has any. */
  async get(path: string, stats: Stats): Promise<Metadata | undefined> {
    const entries = await this.load();
    const entry = entries.get(identity(stats));
    if (!entry || !this.matches(entry, path, stats)) return undefined;
    return entry.metadata;
  }

  /** Replaces the metadata of the file just written at `path` (none clears it). */
  async set(path: string, metadata: Metadata): Promise<void> {
    const entries = await this.load();
    const stats = await stat(path);
    const key = identity(stats);
    const resolved = await realpath(path);
    // An entry left at this path by a file that is gone: the file there now is this one.
    for (const [other, entry] of entries)
      if (other !== key && entry.path === resolved) await this.drop(other);
    if (Object.keys(metadata).length === 0) {
      if (entries.has(key)) await this.drop(key);
      return;
    }
    const entry = { path: resolved, birth: stats.birthtimeMs, metadata };
    const growth = size(entry) - (entries.has(key) ? size(entries.get(key) as Entry) : 0);
    if (!this.fits(growth, entries.has(key))) await this.prune();
    if (!this.fits(growth, entries.has(key)))
      throw new ConnectError(
        "resource_exhausted",
        `the sandbox's file metadata is limited to ${this.limits.files} files and ${this.limits.bytes} bytes; remove some files or upload without metadata`,
      );
    this.bytes += growth;
    entries.set(key, entry);
    await this.record({ set: key, ...entry });
  }

  /**
   * envd moved `from` to `to` (paths as the filesystem resolves them): what was at or below `from`
   * is now at or below `to`, and what was at `to` before was replaced.
   */
  async moved(from: string, to: string): Promise<void> {
    const entries = await this.load();
    for (const [key, entry] of entries) {
      if (below(entry.path, from)) {
        entry.path = to + entry.path.slice(from.length);
        await this.record({ move: key, path: entry.path });
      } else if (below(entry.path, to)) {
        await this.drop(key);
      }
    }
  }

  /** envd removed `path` (as the filesystem resolves it) and everything below it. */
  async removed(path: string): Promise<void> {
    const entries = await this.load();
    for (const [key, entry] of entries) if (below(entry.path, path)) await this.drop(key);
  }

  private matches(entry: Entry, path: string, stats: Stats): boolean {
    if (entry.birth > 0 || stats.birthtimeMs > 0) return entry.birth === stats.birthtimeMs;
    return entry.path === path;
  }

  private fits(growth: number, known: boolean): boolean {
    const files = (this.entries?.size ?? 0) + (known ? 0 : 1);
    return files <= this.limits.files && this.bytes + growth <= this.limits.bytes;
  }

  private async drop(key: string): Promise<void> {
    const entry = this.entries?.get(key);
    if (!entry) return;
    this.entries?.delete(key);
    this.bytes -= size(entry);
    await this.record({ drop: key });
  }

  /** Drops the entries whose file is gone from where it was last seen (deleted by other programs). */
  private async prune(): Promise<void> {
    const entries = await this.load();
    for (const [key, entry] of entries) {
      const stats = await lstat(entry.path).catch(() => undefined);
      if (stats && identity(stats) === key && this.matches(entry, entry.path, stats)) continue;
      await this.drop(key);
    }
  }

  private load(): Promise<Map<string, Entry>> {
    if (this.entries) return Promise.resolve(this.entries);
    this.loading ??= this.read().then((entries) => {
      this.entries = entries;
      return entries;
    });
    return this.loading;
  }

  /** The store as its log left it; lines that do not parse (a torn write, tampering) are skipped. */
  private async read(): Promise<Map<string, Entry>> {
    const entries = new Map<string, Entry>();
    if (!this.file) return entries;
    // A log far larger than the store can be was not written by execd: it is not read.
    const length = (await stat(this.file).catch(() => undefined))?.size ?? 0;
    if (length > 4 * this.limits.bytes) return entries;
    const text = await readFile(this.file, "utf8").catch(() => "");
    for (const raw of text.split("\n")) {
      if (!raw) continue;
      this.lines++;
      let line: Partial<Record<string, unknown>>;
      try {
        line = JSON.parse(raw);
      } catch {
        continue;
      }
      if (typeof line.set === "string" && typeof line.path === "string" && typeof line.birth === "number") {
        if (isMetadata(line.metadata))
          entries.set(line.set, { path: line.path, birth: line.birth, metadata: line.metadata });
      } else if (typeof line.drop === "string") entries.delete(line.drop);
      else if (typeof line.move === "string" && typeof line.path === "string") {
        const entry = entries.get(line.move);
        if (entry) entry.path = line.path;
      }
    }
    for (const entry of entries.values()) this.bytes += size(entry);
    return entries;
  }

  /** Appends a change to the log, or rewrites the log when most of its lines are stale. */
  private record(line: Line): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    const work = this.writing.then(async () => {
      const entries = this.entries ?? new Map<string, Entry>();
      if (this.lines > 2 * entries.size + 1000) {
        const text = [...entries]
          .map(([key, entry]) => `${JSON.stringify({ set: key, ...entry })}\n`)
          .join("");
        const partial = `${file}.${process.pid}.partial`;
        await writeFile(partial, text, { mode: 0o600 });
        await rename(partial, file);
        this.lines = entries.size;
        return;
      }
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      await appendFile(file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
      this.lines++;
    });
    // One failed write does not stop the ones after it.
    this.writing = work.catch(() => undefined);
    return work;
  }
}

/** `path` with its directories resolved as the filesystem does (the entry itself not followed). */
export async function resolvedParent(path: string): Promise<string> {
  const parent = await realpath(dirname(path)).catch(() => dirname(path));
  return join(parent, basename(path));
}
