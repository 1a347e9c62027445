import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  Errors,
  ExecdErrors,
  fieldPath,
  invalidField,
  isPaddockError,
  missingProperty,
  PaddockError,
} from "@paddock/common";
import { readLimited } from "@paddock/runtime";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { deletedResponses, ErrorBody, errorResponses } from "../../http/error-schemas.js";
import { type ExecdRouteOptions, execdRoutes } from "../execd-client.js";
import {
  assertUploadLength,
  inlineTooLarge,
  streamDownload,
  streamUpload,
  wantsRaw,
} from "../file-transfer.js";
import { assertSandboxPath } from "../input-checks.js";
import {
  DeleteQuery,
  DownloadQuery,
  FileList,
  ListQuery,
  MkdirRequest,
  MoveRequest,
  RawBody,
  RawBytes,
  ReadRequest,
  ReadResult,
  SearchRequest,
  UploadQuery,
  WriteQuery,
  WriteRequest,
  WriteResult,
} from "../schemas/files.js";
import { SandboxParams } from "../schemas/sandboxes.js";

const maxInlineRead = 16 * 2 ** 20;
const maxInlineWrite = 16 * 2 ** 20;

function toInfo(entry: Record<string, unknown>) {
  return {
    path: String(entry.path),
    type: String(entry.type ?? "file"),
    size: Number(entry.size ?? 0),
    mode: Number(entry.mode ?? 0),
    owner: String(entry.owner ?? ""),
    group: String(entry.group ?? ""),
    modified_at: String(entry.modified_at ?? ""),
  };
}

/** Files of a sandbox, mapped onto its execd; binary-safe, and streamed for large files. */
export const fileRoutes: FastifyPluginAsyncTypebox<
  ExecdRouteOptions & {
    /** Most bytes one file upload may carry (`[server] max_upload_bytes`); 0 means no limit. */
    maxUploadBytes: number;
  }
> = async (app, options) => {
  const execdFor = execdRoutes(app, options, "file_calls");
  /**
   * A raw body into a sandbox file within `[server] max_upload_bytes`: refused before anything
   * is sent when its Content-Length is over, cut off when a chunked body passes it. A refused
   * body is never read to its end: the connection closes after the answer.
   */
  const rawUpload = async (
    request: FastifyRequest & { params: { id: string } },
    reply: FastifyReply,
    target: { path: string; mode?: number | undefined },
  ) => {
    const limit = options.maxUploadBytes;
    try {
      assertUploadLength(request.headers["content-length"], limit);
      const execd = await execdFor(request);
      return { path: target.path, size: await streamUpload(execd, target, request.raw, limit) };
    } catch (error) {
      if (isPaddockError(error) && error.status === 413) reply.header("connection", "close");
      throw error;
    }
  };
  // Raw uploads stream straight through to execd.
  app.addContentTypeParser("application/octet-stream", (_request, _payload, done) => done(null));
  // Every path these routes take, in the body or the query, is checked before execd sees it.
  app.addHook("preHandler", async (request) => {
    const parts = { query: request.query, body: request.body } as Record<string, Record<string, unknown>>;
    for (const [part, fields] of Object.entries(parts)) {
      if (typeof fields !== "object" || fields === null) continue;
      for (const field of ["path", "from", "to"]) {
        const value = fields[field];
        if (typeof value === "string") assertSandboxPath(value, fieldPath(part, field));
      }
    }
  });
  const tags = ["files"];

  app.post(
    "/sandboxes/:id/files/read",
    {
      schema: {
        tags,
        description:
          "JSON with the content as UTF-8 text or base64 (files up to 16 MiB); with `Accept: application/octet-stream`, the raw bytes of a file of any size, streamed (a `Range` header is honoured).",
        params: SandboxParams,
        body: ReadRequest,
        response: {
          200: {
            content: {
              "application/json": { schema: ReadResult },
              "application/octet-stream": { schema: RawBytes },
            },
          },
          206: { content: { "application/octet-stream": { schema: RawBytes } } },
          ...errorResponses,
          413: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const execd = await execdFor(request);
      const { path, encoding = "utf8" } = request.body;
      if (wantsRaw(request.headers.accept)) return streamDownload(execd, path, request.headers.range, reply);
      const info = await execd.fileInfo(path);
      const size = Object.values(info)[0]?.size ?? 0;
      if (size > maxInlineRead) throw inlineTooLarge(`${path} is ${size} bytes`);
      const bytes = await readLimited(await execd.download(path), maxInlineRead, () =>
        inlineTooLarge(`${path} is larger than ${maxInlineRead} bytes`),
      );
      return reply.send({
        path,
        encoding,
        size: bytes.length,
        content: bytes.toString(encoding === "base64" ? "base64" : "utf8"),
      });
    },
  );

  app.post(
    "/sandboxes/:id/files/write",
    {
      bodyLimit: maxInlineWrite + 64 * 1024,
      schema: {
        tags,
        description:
          "A JSON body with the content as UTF-8 text or base64 (up to 16 MiB of text), or the raw bytes as `application/octet-stream` with `?path=` (streamed to the sandbox, up to the server's `[server] max_upload_bytes`: 413 `payload_too_large` past it).",
        params: SandboxParams,
        querystring: WriteQuery,
        body: {
          content: {
            "application/json": { schema: WriteRequest },
            "application/octet-stream": { schema: RawBody },
          },
        },
        response: { 200: WriteResult, ...errorResponses, 429: ErrorBody, 413: ErrorBody },
      },
    },
    async (request, reply) => {
      if (request.headers["content-type"]?.startsWith("application/octet-stream")) {
        const { path, mode } = request.query;
        if (!path) throw new PaddockError(Errors.invalidRequest, missingProperty("query", "path"));
        return rawUpload(request, reply, { path, mode });
      }
      const execd = await execdFor(request);
      const body = request.body as WriteRequest | undefined;
      if (!body || typeof body !== "object")
        throw new PaddockError(
          Errors.invalidRequest,
          invalidField("body", "must be {path, content} as JSON, or raw bytes"),
        );
      const { path, content, encoding = "utf8", mode } = body;
      const bytes = Buffer.from(content, encoding === "base64" ? "base64" : "utf8");
      assertUploadLength(String(bytes.length), options.maxUploadBytes);
      await execd.upload({ path, ...(mode !== undefined ? { mode } : {}) }, [bytes]);
      return { path, size: bytes.length };
    },
  );

  app.post(
    "/sandboxes/:id/files/upload",
    {
      schema: {
        tags,
        description:
          "The raw bytes as `application/octet-stream`, streamed to `?path=` in the sandbox. A body over the server's `[server] max_upload_bytes` (default 4 GiB) is refused with 413 `payload_too_large`, and the file at `path` is left as it was.",
        params: SandboxParams,
        querystring: UploadQuery,
        response: { 200: WriteResult, ...errorResponses, 429: ErrorBody, 413: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!request.headers["content-type"]?.startsWith("application/octet-stream")) {
        throw new PaddockError(Errors.unsupportedMediaType, "send the file as application/octet-stream");
      }
      const { path, mode } = request.query;
      return rawUpload(request, reply, { path, mode });
    },
  );

  app.get(
    "/sandboxes/:id/files/download",
    {
      schema: {
        tags,
        description: "The raw bytes of a file, streamed; a `Range` header is honoured.",
        params: SandboxParams,
        querystring: DownloadQuery,
        response: {
          200: { content: { "application/octet-stream": { schema: RawBytes } } },
          206: { content: { "application/octet-stream": { schema: RawBytes } } },
          ...errorResponses,
          429: ErrorBody,
        },
      },
    },
    async (request, reply) =>
      streamDownload(await execdFor(request), request.query.path, request.headers.range, reply),
  );

  app.post(
    "/sandboxes/:id/files/move",
    {
      schema: {
        tags,
        params: SandboxParams,
        body: MoveRequest,
        response: { ...deletedResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const execd = await execdFor(request);
      await execd.move(request.body.from, request.body.to);
      return reply.status(204).send(undefined as never);
    },
  );

  app.post(
    "/sandboxes/:id/files/search",
    {
      schema: {
        tags,
        params: SandboxParams,
        body: SearchRequest,
        response: { 200: FileList, ...errorResponses, 413: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => {
      const execd = await execdFor(request);
      const found = await execd.search(request.body.path, request.body.pattern);
      return { items: found.map(toInfo) };
    },
  );

  app.get(
    "/sandboxes/:id/files/list",
    {
      schema: {
        tags,
        params: SandboxParams,
        querystring: ListQuery,
        response: { 200: FileList, ...errorResponses, 413: ErrorBody, 429: ErrorBody },
      },
    },
    async (request) => {
      const execd = await execdFor(request);
      const entries = await execd.listDirectory(request.query.path, request.query.depth ?? 1);
      return { items: entries.map(toInfo) };
    },
  );

  app.delete(
    "/sandboxes/:id/files",
    {
      schema: {
        tags,
        params: SandboxParams,
        querystring: DeleteQuery,
        response: { ...deletedResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const execd = await execdFor(request);
      const { path } = request.query;
      const removed = request.query.recursive === true ? execd.removeDirectory(path) : execd.removeFile(path);
      await removed.catch((error: unknown) => {
        // execd names its own route for directories; on this one the answer is `recursive`.
        if (isPaddockError(error) && error.code === ExecdErrors.isADirectory.code)
          throw new PaddockError(
            ExecdErrors.isADirectory,
            `${request.query.path} is a directory; pass recursive=true to remove it and everything in it`,
          );
        throw error;
      });
      return reply.status(204).send(undefined as never);
    },
  );

  app.post(
    "/sandboxes/:id/directories",
    {
      schema: {
        tags,
        params: SandboxParams,
        body: MkdirRequest,
        response: { 201: Type.Object({ path: Type.String() }), ...errorResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const execd = await execdFor(request);
      const { path, mode } = request.body;
      await execd.makeDirectory(path, mode ?? 755);
      return reply.status(201).send({ path });
    },
  );
};
