import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
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
import type { IncomingMessage, ServerResponse } from "node:http";
import { basename, dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pipeline } from "node:stream/promises";
import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { fieldPath, invalidField, missingProperty } from "@paddock/common/validation-messages";
import { sendJson } from "../http/answers.js";
import { readMultipart } from "../http/multipart.js";
import { parseJson, queryAll, queryOne, readJson, readObject } from "../http/request.js";
import { isRecord } from "../is-record.js";
import { SharedCodes } from "../shared-codes.js";
import { describe, idOfGroup, idOfUser, info, modeBits } from "./file-info.js";
import { globToRegExp } from "./glob.js";

const maxSearchResults = 10_000;
const maxReplaceBytes = 64 * 2 ** 20;

/**
 * Buffer size for file transfers. Node's defaults (16 KiB written, 64 KiB read) make a transfer
 * wait on each small write or read in turn; every syscall is dear under gVisor, and with a larger
 * buffer the network and the disk work side by side, the writes batched into one writev.
 */
const transferBuffer = 1024 * 1024;

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

function paths(url: URL): string[] {
  const all = queryAll(url, "path");
  if (all.length === 0) throw new PaddockError(Errors.invalidRequest, missingProperty("query", "path"));
  return all.map((path) => absolutePath(path));
}

/** Applies owner, group and mode from a wire Permission object. */
async function applyPermission(path: string, permission: Record<string, unknown>): Promise<void> {
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

function permissionMap(body: unknown): Array<[string, Record<string, unknown>]> {
  if (!isRecord(body))
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField("body", "must map paths to {owner, group, mode}"),
    );
  return Object.entries(body).map(([path, permission]) => {
    if (!isRecord(permission))
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(fieldPath("body", path), "must be {owner, group, mode}"),
      );
    return [absolutePath(path, fieldPath("body", path)), permission];
  });
}

export async function fileInfo(url: URL, res: ServerResponse): Promise<void> {
  const result: Record<string, unknown> = {};
  for (const path of paths(url)) result[path] = await info(path);
  sendJson(res, 200, result);
}

export async function deleteFiles(url: URL, res: ServerResponse): Promise<void> {
  for (const path of paths(url)) {
    const stats = await lstat(path).catch(() => undefined);
    if (!stats) continue;
    if (stats.isDirectory())
      throw new PaddockError(ExecdErrors.isADirectory, `${path} is a directory; use DELETE /directories`);
    await unlink(path);
  }
  sendJson(res, 200, {});
}

export async function setPermissions(req: IncomingMessage, res: ServerResponse): Promise<void> {
  for (const [path, permission] of permissionMap(await readJson(req)))
    await applyPermission(path, permission);
  sendJson(res, 200, {});
}

export async function move(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJson(req);
  if (!Array.isArray(body))
    throw new PaddockError(Errors.invalidRequest, invalidField("body", "must be an array of {src, dest}"));
  for (const [index, item] of body.entries()) {
    if (
      !isRecord(item) ||
      typeof item.src !== "string" ||
      typeof item.dest !== "string" ||
      !item.src ||
      !item.dest
    ) {
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(fieldPath("body", index), "needs string src and dest"),
      );
    }
  }
  const moves = (body as Array<{ src: string; dest: string }>).map((item, index) => ({
    src: absolutePath(item.src, fieldPath("body", index, "src")),
    dest: absolutePath(item.dest, fieldPath("body", index, "dest")),
  }));
  for (const item of moves) await rename(item.src, item.dest);
  sendJson(res, 200, {});
}

export async function search(url: URL, res: ServerResponse): Promise<void> {
  const root = absolutePath(queryOne(url, "path", true) as string);
  const pattern = queryOne(url, "pattern") || "**";
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
  sendJson(res, 200, found);
}

export async function replace(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readObject(req);
  const jobs = Object.entries(body).map(([path, item]) => {
    if (!isRecord(item) || typeof item.old !== "string" || typeof item.new !== "string" || item.old === "") {
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(fieldPath("body", path), "must be {old, new} with a non-empty old"),
      );
    }
    return { path: absolutePath(path, fieldPath("body", path)), old: item.old, new: item.new };
  });
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
  if (queryOne(url, "verbose") === "true") sendJson(res, 200, counts);
  else sendJson(res, 200, {});
}

/**
 * Multipart upload: each file is a `metadata` JSON part followed by its `file` part, streamed to
 * a partial file beside its target and renamed over it once whole. An upload that fails (cut off,
 * malformed) removes its partial files, so every target is either the new file or as it was.
 */
export async function upload(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let pending: { path: string; permission: Record<string, unknown> } | undefined;
  const written: string[] = [];
  const finishing: Array<Promise<void>> = [];
  /** Partial files not yet renamed to their targets. */
  const partials = new Map<string, Promise<WriteStream>>();
  try {
    await readMultipart(req, (part) => {
      const chunks: Buffer[] = [];
      if (part.name === "metadata") {
        return {
          write: async (chunk) => {
            chunks.push(chunk);
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
        const stream = createWriteStream(partial, { highWaterMark: transferBuffer });
        await once(stream, "open");
        return stream;
      });
      opening.catch(() => undefined);
      partials.set(partial, opening);
      return {
        write: async (chunk) => {
          const stream = await opening;
          if (!stream.write(chunk)) await once(stream, "drain");
        },
        end: async () => {
          const stream = await opening;
          const finished = once(stream, "finish");
          stream.end();
          await finished;
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
  sendJson(res, 200, { files: written });
}

/**
 * Content-Disposition for any file name (RFC 6266): an ASCII stand-in for old clients and the
 * exact name percent-encoded as UTF-8 in `filename*`, since a header cannot carry other bytes.
 */
function attachment(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const exact = encodeURIComponent(name).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

export async function download(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = absolutePath(queryOne(url, "path", true) as string);
  const stats = await stat(path);
  if (!stats.isFile()) throw new PaddockError(Errors.invalidRequest, `${path} is not a file`);
  const offset = queryOne(url, "offset");
  const limit = queryOne(url, "limit");
  const range = req.headers.range;
  if ((offset || limit) && range)
    throw new PaddockError(Errors.invalidRequest, "offset/limit and Range are mutually exclusive");
  if (offset || limit)
    return downloadLines(path, Number(offset ?? 1), limit ? Number(limit) : undefined, res);

  const headers = {
    "content-type": "application/octet-stream",
    "content-disposition": attachment(basename(path)),
    "accept-ranges": "bytes",
  };
  if (!range) {
    res.writeHead(200, { ...headers, "content-length": stats.size });
    await pipeline(createReadStream(path, { highWaterMark: transferBuffer }), res);
    return;
  }
  const match = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
  let start = match?.[1] ? Number(match[1]) : undefined;
  let end = match?.[2] ? Number(match[2]) : undefined;
  if (start === undefined && end !== undefined) {
    start = Math.max(0, stats.size - end);
    end = stats.size - 1;
  }
  if (!match || start === undefined || start >= stats.size || (end !== undefined && end < start)) {
    res.writeHead(416, { "content-type": "application/json", "content-range": `bytes */${stats.size}` });
    res.end(
      JSON.stringify({
        code: SharedCodes.rangeNotSatisfiable.code,
        message: `range ${range} is outside 0-${stats.size - 1}`,
      }),
    );
    return;
  }
  end = Math.min(end ?? stats.size - 1, stats.size - 1);
  res.writeHead(206, {
    ...headers,
    "content-length": end - start + 1,
    "content-range": `bytes ${start}-${end}/${stats.size}`,
  });
  await pipeline(createReadStream(path, { start, end, highWaterMark: transferBuffer }), res);
}

async function downloadLines(
  path: string,
  offset: number,
  limit: number | undefined,
  res: ServerResponse,
): Promise<void> {
  if (!Number.isInteger(offset) || offset < 1)
    throw new PaddockError(Errors.invalidRequest, invalidField("query.offset", "must be integer >= 1"));
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
    throw new PaddockError(Errors.invalidRequest, invalidField("query.limit", "must be integer >= 1"));
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
  let line = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const text of lines) {
    line++;
    if (line < offset) continue;
    if (limit !== undefined && line >= offset + limit) break;
    // Lines joined by "\n", none after the last, as OpenSandbox's execd answers them.
    const separated = line === offset ? text : `\n${text}`;
    if (!res.write(separated)) await new Promise((resolve) => res.once("drain", resolve));
  }
  lines.close();
  res.end();
}

export async function listDirectory(url: URL, res: ServerResponse): Promise<void> {
  const root = absolutePath(queryOne(url, "path", true) as string);
  const depthText = queryOne(url, "depth");
  const depth = depthText === undefined ? 1 : Number(depthText);
  if (!Number.isInteger(depth) || depth < 1)
    throw new PaddockError(Errors.invalidRequest, invalidField("query.depth", "must be integer >= 1"));
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
  sendJson(res, 200, entries);
}

export async function makeDirectories(req: IncomingMessage, res: ServerResponse): Promise<void> {
  for (const [path, permission] of permissionMap(await readJson(req))) {
    await mkdir(path, { recursive: true });
    await applyPermission(path, { mode: 755, ...permission });
  }
  sendJson(res, 200, {});
}

export async function removeDirectories(url: URL, res: ServerResponse): Promise<void> {
  for (const path of paths(url)) {
    if (path === "/") throw new PaddockError(Errors.invalidRequest, "refusing to delete /");
    const stats = await lstat(path).catch(() => undefined);
    if (stats && !stats.isDirectory())
      throw new PaddockError(Errors.invalidRequest, `${path} is not a directory; use DELETE /files`);
    await rm(path, { recursive: true, force: true });
  }
  sendJson(res, 200, {});
}
