import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import {
  chmod,
  chown,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  writeFile,
} from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { fieldPath, invalidField, missingProperty } from "@paddock/common/validation-messages";
import { isRecord, parseJson } from "../json.js";
import { describe, idOfGroup, idOfUser, info, modeBits } from "./file-info.js";
import { fileWriter, uploadFileBuffer } from "./file-writer.js";
import { globToRegExp } from "./glob.js";

const maxSearchResults = 10_000;
const maxReplaceBytes = 64 * 2 ** 20;

/**
 * Buffer size for file transfers. Node's defaults (16 KiB written, 64 KiB read) make a transfer
 * wait on each small write or read in turn; every syscall is dear under gVisor, and with a larger
 * buffer the network and the disk work side by side, the writes batched into one writev.
 */
export const transferBuffer = 1024 * 1024;

/**
 * A client's path, checked and normalised: absolute (a relative one would be relative to execd's
 * own working directory, which no client chose) and without a NUL, checked here rather than left
 * to Node's refusal (deletes treat a path they cannot stat as gone).
 */
export function absolutePath(path: string, field = "query.path"): string {
  if (path === "") throw new PaddockError(Errors.invalidRequest, invalidField(field, "must not be empty"));
  if (path.includes("\0"))
    throw new PaddockError(Errors.invalidRequest, invalidField(field, "cannot contain a NUL byte"));
  if (!path.startsWith("/"))
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField(field, `must be an absolute path (starting with /), not ${JSON.stringify(path)}`),
    );
  return resolve(path);
}

/** Applies owner, group and mode from a wire Permission object. */
export async function applyPermission(path: string, permission: Record<string, unknown>): Promise<void> {
  const { owner, group, mode } = permission;
  if (mode !== undefined) {
    if (typeof mode !== "number")
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(fieldPath("body", path, "mode"), "must be a number like 644"),
      );
    try {
      await chmod(path, modeBits(mode));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code) throw error;
      throw new PaddockError(Errors.invalidRequest, `${path}: ${(error as Error).message}`);
    }
  }
  if (owner !== undefined || group !== undefined) {
    if (
      (owner !== undefined && typeof owner !== "string") ||
      (group !== undefined && typeof group !== "string")
    ) {
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(fieldPath("body", path), "owner and group must be names or numeric ids"),
      );
    }
    const current = await stat(path);
    const uid = owner ? idOfUser(owner) : current.uid;
    const gid = group ? idOfGroup(group) : current.gid;
    if (uid === undefined) throw new PaddockError(Errors.invalidRequest, `${path}: no user ${owner}`);
    if (gid === undefined) throw new PaddockError(Errors.invalidRequest, `${path}: no group ${group}`);
    await chown(path, uid, gid);
  }
}

/** Each path's entry, by path. */
export async function fileInfo(paths: string[]): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = {};
  for (const path of paths) result[path] = await info(path);
  return result;
}

/** Deletes files (not directories); a path that is not there is already deleted. */
export async function deleteFiles(paths: string[]): Promise<void> {
  for (const path of paths) {
    const stats = await lstat(path).catch(() => undefined);
    if (!stats) continue;
    if (stats.isDirectory())
      throw new PaddockError(ExecdErrors.isADirectory, `${path} is a directory; use DELETE /directories`);
    await unlink(path);
  }
}

export async function setPermissions(permissions: Array<[string, Record<string, unknown>]>): Promise<void> {
  for (const [path, permission] of permissions) await applyPermission(path, permission);
}

export async function move(moves: Array<{ src: string; dest: string }>): Promise<void> {
  for (const item of moves) await rename(item.src, item.dest);
}

/** Files under `root` whose path relative to it matches the glob `pattern` (at most 10000). */
export async function search(root: string, pattern: string): Promise<unknown[]> {
  let matcher: RegExp;
  try {
    matcher = globToRegExp(pattern);
  } catch {
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField("query.pattern", `${JSON.stringify(pattern)} is not a valid glob`),
    );
  }
  if (!(await stat(root)).isDirectory())
    throw new PaddockError(Errors.invalidRequest, `${root} is not a directory`);
  const found: unknown[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (found.length >= maxSearchResults) return;
      const path = join(dir, entry.name);
      if (!entry.isDirectory() && matcher.test(relative(root, path)))
        found.push(describe(path, await lstat(path)));
      if (entry.isDirectory() && !entry.isSymbolicLink()) await walk(path);
    }
  };
  await walk(root);
  return found;
}

/** Replaces every `old` with `new` in each file; how many each had. */
export async function replace(
  jobs: Array<{ path: string; old: string; new: string }>,
): Promise<Record<string, { replacedCount: number }>> {
  const counts: Record<string, { replacedCount: number }> = {};
  for (const job of jobs) {
    const stats = await stat(job.path);
    if (stats.size > maxReplaceBytes)
      throw new PaddockError(Errors.payloadTooLarge, `${job.path} is larger than 64 MiB`);
    const text = await readFile(job.path, "utf8");
    const parts = text.split(job.old);
    counts[job.path] = { replacedCount: parts.length - 1 };
    if (parts.length > 1) await writeFile(job.path, parts.join(job.new), { mode: stats.mode });
  }
  return counts;
}

/** What an upload does with each part of its body: its bytes in order, then its end. */
export type OnPart = (part: { name: string }) => {
  /** A promise only when the next bytes must wait for it. */
  write: (chunk: Buffer) => Promise<void> | undefined;
  end: () => Promise<void>;
};

/**
 * Multipart upload: each file is a `metadata` JSON part followed by its `file` part, streamed to
 * a partial file beside its target and renamed over it once whole. An upload that fails (cut off,
 * malformed) removes its partial files, so every target is either the new file or as it was.
 */
export async function upload(readParts: (onPart: OnPart) => Promise<void>): Promise<string[]> {
  let pending: { path: string; permission: Record<string, unknown> } | undefined;
  const written: string[] = [];
  const finishing: Array<Promise<void>> = [];
  /** Partial files not yet renamed to their targets. */
  const partials = new Map<string, Promise<WriteStream>>();
  try {
    await readParts((part) => {
      const chunks: Buffer[] = [];
      if (part.name === "metadata") {
        return {
          write: (chunk) => {
            chunks.push(chunk);
            return undefined;
          },
          end: async () => {
            const metadata = parseJson(Buffer.concat(chunks), "upload metadata");
            if (!isRecord(metadata) || typeof metadata.path !== "string" || !metadata.path) {
              throw new PaddockError(Errors.invalidRequest, missingProperty("metadata", "path"));
            }
            pending = { path: absolutePath(metadata.path, "metadata.path"), permission: metadata };
          },
        };
      }
      if (!pending)
        throw new PaddockError(Errors.invalidRequest, "each file part must follow its metadata part");
      const target = pending;
      pending = undefined;
      const partial = `${target.path}.upload-${process.pid}`;
      // Open only once the directory exists (opening first races mkdir and fails with ENOENT), and
      // let every wait below fail on a stream error instead of waiting for a drain that never comes.
      const opening = mkdir(dirname(target.path), { recursive: true }).then(async () => {
        const stream = createWriteStream(partial, { highWaterMark: uploadFileBuffer });
        await once(stream, "open");
        return stream;
      });
      opening.catch(() => undefined);
      partials.set(partial, opening);
      const writer = fileWriter(opening);
      return {
        write: writer.write,
        end: async () => {
          await writer.end();
          await rename(partial, target.path);
          partials.delete(partial);
          const { mode, owner, group } = target.permission;
          finishing.push(applyPermission(target.path, { mode, owner, group }));
          written.push(target.path);
        },
      };
    });
  } catch (error) {
    for (const [partial, opening] of partials) {
      // A write may still be in flight: its failure once the stream is destroyed is expected,
      // and unheard it would be an uncaught error that ends execd.
      (await opening.catch(() => undefined))?.on("error", () => undefined).destroy();
      await rm(partial, { force: true });
    }
    throw error;
  }
  await Promise.all(finishing);
  return written;
}

/** The entries under a directory, `depth` levels down (at most 10000). */
export async function listDirectory(root: string, depth: number): Promise<unknown[]> {
  const rootStats = await lstat(root);
  if (rootStats.isSymbolicLink())
    throw new PaddockError(Errors.invalidRequest, `${root} is a symbolic link; pass the real directory`);
  if (!rootStats.isDirectory()) throw new PaddockError(Errors.invalidRequest, `${root} is not a directory`);
  const entries: unknown[] = [];
  const walk = async (dir: string, level: number): Promise<void> => {
    const children = await readdir(dir, { withFileTypes: true });
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const child of children) {
      if (entries.length >= maxSearchResults) return;
      const path = join(dir, child.name);
      const stats = await lstat(path).catch(() => undefined);
      if (!stats) continue;
      entries.push(describe(path, stats));
      if (stats.isDirectory() && level < depth) await walk(path, level + 1);
    }
  };
  await walk(root, 1);
  return entries;
}

export async function makeDirectories(directories: Array<[string, Record<string, unknown>]>): Promise<void> {
  for (const [path, permission] of directories) {
    await mkdir(path, { recursive: true });
    await applyPermission(path, { mode: 755, ...permission });
  }
}

export async function removeDirectories(paths: string[]): Promise<void> {
  for (const path of paths) {
    if (path === "/") throw new PaddockError(Errors.invalidRequest, "refusing to delete /");
    const stats = await lstat(path).catch(() => undefined);
    if (stats && !stats.isDirectory())
      throw new PaddockError(Errors.invalidRequest, `${path} is not a directory; use DELETE /files`);
    await rm(path, { recursive: true, force: true });
  }
}
