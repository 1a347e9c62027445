import type { WriteStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { basename, dirname } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { fileWriter, uploadFileBuffer } from "../files/file-writer.js";
import { readMultipart } from "../http/multipart.js";
import { ConnectError } from "./connect.js";
import type { FileMetadataStore, Metadata } from "./file-metadata.js";
import { type EnvdUser, ensureDirectory, ownBy, resolvePath } from "./files-user.js";

/** What envd answers for each uploaded file. */
export interface Uploaded {
  path: string;
  name: string;
  type: "file";
  metadata?: Metadata;
}

/** The metadata every file of an upload gets (none clears theirs), and where it is kept. */
export interface UploadMetadata {
  metadata: Metadata;
  store: FileMetadataStore;
}

/** Records a written file's metadata and describes the file as envd answers it. */
async function uploaded(target: string, { metadata, store }: UploadMetadata): Promise<Uploaded> {
  await store.set(target, metadata);
  const described: Uploaded = { path: target, name: basename(target), type: "file" };
  if (Object.keys(metadata).length > 0) described.metadata = metadata;
  return described;
}

/**
 * A file opened for an upload, as envd writes one: its directories made (the user's), then the
 * file itself truncated and written in place (so a watcher sees it created and written, not a
 * temporary file renamed), owned by the user.
 */
async function openTarget(path: string, user: EnvdUser): Promise<WriteStream> {
  await ensureDirectory(dirname(path), user);
  if ((await stat(path).catch(() => undefined))?.isDirectory())
    throw new ConnectError("invalid_argument", `path is a directory: ${path}`);
  const handle = await open(path, "w", 0o666);
  try {
    await ownBy(path, user);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle.createWriteStream({ highWaterMark: uploadFileBuffer });
}

/**
 * A form part's file name as fetch() and browsers write it (the WHATWG form encoding escapes
 * `"`, CR and LF as %22, %0D, %0A): E2B's SDKs put the file's path there.
 */
function formFileName(name: string): string {
  return name.replaceAll("%22", '"').replaceAll("%0D", "\r").replaceAll("%0A", "\n");
}

/** A gzip body that is not gzip is the client's fault, not execd's. */
function corruptGzip(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code ?? "";
  return code.startsWith("Z_")
    ? new ConnectError("invalid_argument", `the gzip body is corrupt: ${(error as Error).message}`)
    : error;
}

/**
 * envd's `POST /files`: `application/octet-stream` (one file, at the `path` parameter, gzip
 * Content-Encoding allowed) or `multipart/form-data` (every `file` part, at the `path` parameter or
 * at its file name), each streamed to disk.
 */
export async function receiveUpload(
  req: IncomingMessage,
  user: EnvdUser,
  path: string | undefined,
  metadata: UploadMetadata,
): Promise<Uploaded[]> {
  const encoding = (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip")
    throw new ConnectError("invalid_argument", `unsupported Content-Encoding: ${encoding}, supported: gzip`);
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/octet-stream") {
    if (!path)
      throw new ConnectError(
        "invalid_argument",
        "the path query parameter is required for an application/octet-stream upload",
      );
    const target = resolvePath(path, user);
    const file = await openTarget(target, user);
    await (encoding === "gzip" ? pipeline(req, createGunzip(), file) : pipeline(req, file)).catch((error) => {
      throw corruptGzip(error);
    });
    return [await uploaded(target, metadata)];
  }
  if (type.startsWith("multipart/")) {
    if (encoding === "gzip")
      throw new ConnectError(
        "invalid_argument",
        "gzip-encoded multipart uploads are not served; send the file as application/octet-stream",
      );
    return receiveParts(req, user, path, metadata);
  }
  throw new ConnectError(
    "invalid_argument",
    `unsupported content type: ${type || "none"}, expected multipart/form-data or application/octet-stream`,
  );
}

async function receiveParts(
  req: IncomingMessage,
  user: EnvdUser,
  path: string | undefined,
  metadata: UploadMetadata,
): Promise<Uploaded[]> {
  const written: Uploaded[] = [];
  const targets = new Set<string>();
  const unfinished = new Set<WriteStream>();
  const ignored = { write: () => undefined, end: async () => undefined };
  try {
    await readMultipart(req, (part) => {
      // envd reads only the parts named "file".
      if (part.name !== "file") return ignored;
      const named = path || (part.filename ? formFileName(part.filename) : undefined);
      if (!named)
        throw new ConnectError(
          "invalid_argument",
          "each file part needs its path as its file name, or the request the path query parameter",
        );
      const target = resolvePath(named, user);
      if (targets.has(target))
        throw new ConnectError(
          "invalid_argument",
          `you cannot upload multiple files to the same path '${target}' in one upload request`,
        );
      targets.add(target);
      const opening = openTarget(target, user).then((file) => {
        unfinished.add(file);
        return file;
      });
      // Awaited by the part's first write or its end; a body cut short awaits neither.
      opening.catch(() => undefined);
      const writer = fileWriter(opening);
      return {
        write: writer.write,
        end: async () => {
          unfinished.delete(await writer.end());
          written.push(await uploaded(target, metadata));
        },
      };
    });
  } finally {
    // A request that failed or was cut mid-part leaves its file as far as it got, closed.
    for (const file of unfinished) file.destroy();
  }
  return written;
}
