import type { Readable } from "node:stream";
import { Errors, PaddockError } from "@paddock/common";
import type { FastifyReply } from "fastify";
import { checked, type ExecdClient } from "./execd-client.js";

/** The refusal of an upload larger than `[server] max_upload_bytes`. */
export function uploadTooLarge(limit: number): PaddockError {
  return new PaddockError(
    Errors.payloadTooLarge,
    `the upload is larger than this server's limit of ${limit} bytes (${(limit / 2 ** 20).toFixed(1)} MiB); its operator sets the limit with [server] max_upload_bytes (0: no limit)`,
  );
}

/** Refuses at once a body whose Content-Length is over the limit (0: no limit). */
export function assertUploadLength(contentLength: string | undefined, limit: number): void {
  if (limit > 0 && contentLength !== undefined && Number(contentLength) > limit) throw uploadTooLarge(limit);
}

/**
 * Streams a raw request body into a sandbox file through execd's multipart upload, without
 * holding it in memory. Returns the number of bytes written. A body that passes `limit` bytes
 * (0: no limit) is cut off before its multipart end, so execd drops the partial file and leaves
 * the target as it was.
 */
export async function streamUpload(
  execd: ExecdClient,
  target: { path: string; mode?: number | undefined },
  source: Readable,
  limit: number,
): Promise<number> {
  const boundary = `paddock${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  const metadata = JSON.stringify({
    path: target.path,
    ...(target.mode !== undefined ? { mode: target.mode } : {}),
  });
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${metadata}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\n\r\n`;
  let size = 0;
  const body = (async function* () {
    yield Buffer.from(head);
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (limit > 0 && size > limit) throw uploadTooLarge(limit);
      yield chunk as Buffer;
    }
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  })();
  await checked(
    await execd.send("/files/upload", { "content-type": `multipart/form-data; boundary=${boundary}` }, body),
  );
  return size;
}

const passedHeaders = [
  "content-type",
  "content-length",
  "content-range",
  "accept-ranges",
  "content-disposition",
];

/** Streams a sandbox file (or a byte range of it) to the reply as raw bytes. */
export async function streamDownload(
  execd: ExecdClient,
  path: string,
  range: string | undefined,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const response = await checked(
    await execd.request(
      `/files/download?path=${encodeURIComponent(path)}`,
      range ? { headers: { range } } : {},
    ),
  );
  reply.status(response.status);
  for (const header of passedHeaders) {
    const value = response.headers.get(header);
    if (value) reply.header(header, value);
  }
  reply.header("content-type", "application/octet-stream");
  return reply.send(response.body);
}

/**
 * Reads a whole download of at most `limit` bytes. The size asked of execd beforehand is only
 * a hint: the sandbox can swap or grow the file in between, so past `limit` the download is
 * cancelled and refused, never held in memory.
 */
export async function readLimited(
  response: Response,
  limit: number,
  tooLarge: () => PaddockError,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Most bytes of one JSON answer from execd (a listing, a search) the server reads: a sandbox can
 * make a tree whose listing is as large as it likes.
 */
export const maxExecdJson = 64 * 2 ** 20;

/** Parses execd's JSON answer, refused with 413 once it passes `maxExecdJson` bytes. */
export async function readJsonLimited<T>(response: Response, what: string): Promise<T> {
  const bytes = await readLimited(
    response,
    maxExecdJson,
    () =>
      new PaddockError(
        Errors.payloadTooLarge,
        `${what} is larger than ${maxExecdJson / 2 ** 20} MiB; ask for less (a narrower path, a smaller depth)`,
      ),
  );
  return JSON.parse(bytes.toString("utf8")) as T;
}

/** The refusal of a JSON read of a file too large to inline; `what` says how large it is. */
export function inlineTooLarge(what: string): PaddockError {
  return new PaddockError(
    Errors.payloadTooLarge,
    `${what}; ask for it with \`Accept: application/octet-stream\` to stream it`,
  );
}

/** Whether the caller asked for raw bytes rather than JSON. */
export function wantsRaw(accept: string | undefined): boolean {
  return /\bapplication\/octet-stream\b/i.test(accept ?? "");
}
