import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { join, posix } from "node:path";
import { PassThrough, type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { Errors, isPaddockError, PaddockError, sha256 } from "@paddock/common";
import tar from "tar-stream";

/**
 * Archives an account uploads for its builds: a Dockerfile's build context, or the files of an E2B
 * template's COPY steps. Kept per account on the host (`<dir>/<account hash>/<sha256>`), so one
 * account's builds can never name another's files, and read by COPY steps.
 */
export class BuildFiles {
  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  /**
   * Stores an upload (tar, or tar.gz). Named by the sha256 of its bytes, or by `name` where the
   * client chose it (E2B names an upload by the hash of what it holds). Past `maxBytes` it is
   * refused with 413 and nothing is kept.
   */
  async store(owner: string, body: Readable, name?: string): Promise<{ hash: string; bytes: number }> {
    const dir = this.ownerDir(owner);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const partial = join(dir, `.upload-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const hash = createHash("sha256");
    let bytes = 0;
    const counted = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        bytes += chunk.length;
        if (this.maxBytes && bytes > this.maxBytes) {
          done(
            new PaddockError(
              Errors.payloadTooLarge,
              `build files are limited to ${this.maxBytes} bytes (templates.max_build_files_bytes)`,
            ),
          );
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, counted, createWriteStream(partial, { mode: 0o600 }));
      const digest = name ?? hash.digest("hex");
      await rename(partial, join(dir, digest));
      return { hash: digest, bytes };
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  has(owner: string, hash: string): boolean {
    return /^[a-f0-9]{64}$/.test(hash) && existsSync(join(this.ownerDir(owner), hash));
  }

  /** The archive's tar bytes, ungzipped when it was gzipped. */
  async open(owner: string, hash: string): Promise<Readable> {
    if (!this.has(owner, hash))
      throw new PaddockError(Errors.templateFilesNotFound, `no uploaded files ${hash} for this account`);
    const path = join(this.ownerDir(owner), hash);
    const head = Buffer.alloc(2);
    const file = await open(path);
    await file.read(head, 0, 2, 0).finally(() => file.close());
    const stream = createReadStream(path);
    return head[0] === 0x1f && head[1] === 0x8b ? stream.pipe(createGunzip()) : stream;
  }

  private ownerDir(owner: string): string {
    return join(this.dir, sha256(owner).slice(0, 32));
  }
}

export interface CopySelection {
  src: string;
  dest: string;
  uid: number;
  gid: number;
  mode?: number | undefined;
}

/** An archive entry's name, relative and without `./`; undefined when it would leave the archive. */
function entryName(name: string): string | undefined {
  const normal = posix.normalize(name.replace(/^\.\/+/, "")).replace(/\/+$/, "");
  if (!normal || normal === ".") return "";
  if (posix.isAbsolute(normal) || normal === ".." || normal.startsWith("../")) return undefined;
  return normal;
}

/** Names in an archive, with whether each is a directory: what a COPY's source is decided from. */
export async function listArchive(archive: Readable): Promise<Map<string, boolean>> {
  const names = new Map<string, boolean>();
  const extract = tar.extract();
  extract.on("entry", (header, stream, next) => {
    const name = entryName(header.name);
    if (name) {
      names.set(name, header.type === "directory");
      // A file's parents are directories even when the archive lists no entry for them.
      for (let parent = posix.dirname(name); parent !== "."; parent = posix.dirname(parent))
        names.set(parent, true);
    }
    stream.on("end", next);
    stream.resume();
  });
  await readArchive(archive, extract);
  return names;
}

/**
 * A COPY as an archive to unpack at `/` in the image: the entries `src` selects (a file, a
 * directory's contents, or names matching a glob), renamed under `dest`, owned by uid:gid. Names
 * that would leave the archive (absolute, `..`) are refused rather than skipped.
 */
export function selectForCopy(
  archive: Readable,
  names: Map<string, boolean>,
  selection: CopySelection,
  refuse: (why: string) => never,
): Readable {
  const src = entryName(selection.src);
  if (src === undefined) refuse(`source ${selection.src} is outside the build files`);
  const glob = /[*?[]/.test(selection.src);
  const matches = glob
    ? [...names.keys()].filter((name) => posix.matchesGlob(name, src as string))
    : src === "" || names.has(src as string)
      ? [src as string]
      : [];
  if (!matches.length) refuse(`source ${selection.src} is not in the build files`);
  const destDir =
    selection.dest.endsWith("/") || matches.length > 1 || names.get(matches[0] as string) === true;
  const dest = posix.normalize(selection.dest).replace(/^\/+/, "").replace(/\/+$/, "");
  /** Where an entry goes, or undefined when the COPY does not select it. */
  const target = (name: string): string | undefined => {
    for (const match of matches) {
      if (match === "" || name.startsWith(`${match}/`)) {
        const rest = match === "" ? name : name.slice(match.length + 1);
        return posix.join(dest || ".", rest);
      }
      if (name === match) {
        if (names.get(match)) return dest || ".";
        return destDir ? posix.join(dest || ".", posix.basename(match)) : dest;
      }
    }
    return undefined;
  };
  const pack = tar.pack();
  const extract = tar.extract();
  extract.on("entry", (header, stream, next) => {
    const name = entryName(header.name);
    if (name === undefined) {
      extract.destroy(
        new PaddockError(Errors.invalidTemplateBuild, `archive entry ${header.name} leaves the archive`),
      );
      return;
    }
    const to = name === "" ? undefined : target(name);
    const supported = ["file", "directory", "symlink"].includes(header.type ?? "file");
    if (!to || to === "." || !supported) {
      stream.on("end", next);
      stream.resume();
      return;
    }
    const mode =
      header.type === "file" && selection.mode !== undefined
        ? selection.mode
        : (header.mode ?? 0o644) & 0o7777;
    const entry = pack.entry(
      { ...header, name: to, uid: selection.uid, gid: selection.gid, uname: "", gname: "", mode },
      (error) => (error ? extract.destroy(error) : next()),
    );
    stream.pipe(entry);
  });
  extract.on("finish", () => pack.finalize());
  extract.on("error", (error) => pack.destroy(error));
  archive.on("error", (error) => extract.destroy(error));
  archive.pipe(extract);
  const out = new PassThrough();
  pack.on("error", (error) => out.destroy(error));
  return pack.pipe(out);
}

/**
 * What a COPY would write, as a digest: names, types, modes, owners, link targets and contents,
 * times left out. The step cache keys a COPY by it, so a context whose other files changed, or an
 * archive made again with new times, still finds the step.
 */
export async function digestOfCopy(copy: Readable): Promise<string> {
  const hash = createHash("sha256");
  const extract = tar.extract();
  extract.on("entry", (header, stream, next) => {
    const { name, type, mode, uid, gid, linkname } = header;
    hash.update(`${JSON.stringify([name, type, mode, uid, gid, linkname])}\0`);
    stream.on("data", (chunk) => hash.update(chunk as Buffer));
    stream.on("end", next);
  });
  await readArchive(copy, extract);
  return hash.digest("hex");
}

/** Longest Dockerfile read from a context. */
const maxDockerfileBytes = 1024 * 1024;

/** One file's text from an archive (a context's Dockerfile), or undefined when it has none. */
export async function readArchiveFile(archive: Readable, path: string): Promise<string | undefined> {
  const wanted = entryName(path);
  let text: string | undefined;
  const extract = tar.extract();
  extract.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const match = header.type === "file" && entryName(header.name) === wanted;
    stream.on("data", (chunk) => {
      if (!match) return;
      bytes += (chunk as Buffer).length;
      if (bytes <= maxDockerfileBytes) chunks.push(chunk as Buffer);
    });
    stream.on("end", () => {
      if (match) {
        if (bytes > maxDockerfileBytes)
          extract.destroy(
            new PaddockError(Errors.invalidTemplateBuild, `${path} is over ${maxDockerfileBytes} bytes`),
          );
        text = Buffer.concat(chunks).toString("utf8");
      }
      next();
    });
  });
  await readArchive(archive, extract);
  return text;
}

/** Reads an archive through `extract`; one that is no tar (or tar.gz) is refused, saying so. */
async function readArchive(archive: Readable, extract: tar.Extract): Promise<void> {
  try {
    await pipeline(archive, extract);
  } catch (error) {
    if (isPaddockError(error)) throw error;
    throw new PaddockError(
      Errors.invalidTemplateBuild,
      `the build files are not a tar or tar.gz archive: ${(error as Error).message}`,
    );
  }
}
