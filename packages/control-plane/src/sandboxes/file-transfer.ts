import type { Readable } from "node:stream";
import { Errors, PaddockError } from "@paddock/common";
import type { ExecdClient } from "@paddock/runtime";
import type { FastifyReply } from "fastify";

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
  let size = 0;
  const content = (async function* () {
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (limit > 0 && size > limit) throw uploadTooLarge(limit);
      yield chunk as Buffer;
    }
  })();
  await execd.upload(
    { path: target.path, ...(target.mode !== undefined ? { mode: target.mode } : {}) },
    content,
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
  const response = await execd.download(path, range);
  reply.status(response.status);
  for (const header of passedHeaders) {
    const value = response.headers.get(header);
    if (value) reply.header(header, value);
  }
  reply.header("content-type", "application/octet-stream");
  return reply.send(response.body);
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
