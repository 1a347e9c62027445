import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { basename } from "node:path";
import { createInterface } from "node:readline";
import { pipeline } from "node:stream/promises";
import { Errors, PaddockError } from "@paddock/common/errors";
import { fieldPath, invalidField, missingProperty } from "@paddock/common/validation-messages";
import * as files from "../files/files.js";
import { absolutePath, transferBuffer } from "../files/files.js";
import { isRecord } from "../json.js";
import { sendJson } from "./answers.js";
import { readMultipart } from "./multipart.js";
import { queryAll, queryOne, readJson, readObject } from "./request.js";
import { type Route, route } from "./router.js";

/** OpenSandbox's file and directory routes: each request checked here, then done by files/. */
export function fileRoutes(): Route[] {
  return [
    route("GET", "/files/info", async (_req, res, url) =>
      sendJson(res, 200, await files.fileInfo(paths(url))),
    ),
    route("DELETE", "/files", async (_req, res, url) => {
      await files.deleteFiles(paths(url));
      sendJson(res, 200, {});
    }),
    route("POST", "/files/permissions", async (req, res) => {
      await files.setPermissions(permissionMap(await readJson(req)));
      sendJson(res, 200, {});
    }),
    route("POST", "/files/mv", async (req, res) => {
      await files.move(moves(await readJson(req)));
      sendJson(res, 200, {});
    }),
    route("GET", "/files/search", async (_req, res, url) => {
      const root = absolutePath(queryOne(url, "path", true) as string);
      sendJson(res, 200, await files.search(root, queryOne(url, "pattern") || "**"));
    }),
    route("POST", "/files/replace", async (req, res, url) => {
      const counts = await files.replace(replacements(await readObject(req)));
      sendJson(res, 200, queryOne(url, "verbose") === "true" ? counts : {});
    }),
    route("POST", "/files/upload", async (req, res) => {
      const written = await files.upload((onPart) => readMultipart(req, onPart));
      sendJson(res, 200, { files: written });
    }),
    route("GET", "/files/download", (req, res, url) => download(url, req, res)),
    route("GET", "/directories/list", async (_req, res, url) => {
      const root = absolutePath(queryOne(url, "path", true) as string);
      const depthText = queryOne(url, "depth");
      const depth = depthText === undefined ? 1 : Number(depthText);
      if (!Number.isInteger(depth) || depth < 1)
        throw new PaddockError(Errors.invalidRequest, invalidField("query.depth", "must be integer >= 1"));
      sendJson(res, 200, await files.listDirectory(root, depth));
    }),
    route("POST", "/directories", async (req, res) => {
      await files.makeDirectories(permissionMap(await readJson(req)));
      sendJson(res, 200, {});
    }),
    route("DELETE", "/directories", async (_req, res, url) => {
      await files.removeDirectories(paths(url));
      sendJson(res, 200, {});
    }),
  ];
}

function paths(url: URL): string[] {
  const all = queryAll(url, "path");
  if (all.length === 0) throw new PaddockError(Errors.invalidRequest, missingProperty("query", "path"));
  return all.map((path) => absolutePath(path));
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

/** `[{src, dest}]`, each an absolute path. */
function moves(body: unknown): Array<{ src: string; dest: string }> {
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
  return (body as Array<{ src: string; dest: string }>).map((item, index) => ({
    src: absolutePath(item.src, fieldPath("body", index, "src")),
    dest: absolutePath(item.dest, fieldPath("body", index, "dest")),
  }));
}

/** `{path: {old, new}}`, each path absolute and each `old` not empty. */
function replacements(body: Record<string, unknown>): Array<{ path: string; old: string; new: string }> {
  return Object.entries(body).map(([path, item]) => {
    if (!isRecord(item) || typeof item.old !== "string" || typeof item.new !== "string" || item.old === "") {
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField(fieldPath("body", path), "must be {old, new} with a non-empty old"),
      );
    }
    return { path: absolutePath(path, fieldPath("body", path)), old: item.old, new: item.new };
  });
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

/**
 * A file's bytes (`Range` honoured: 206, or 416 outside the file), or some of its lines
 * (`offset`, `limit`) as text.
 */
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
        code: Errors.rangeNotSatisfiable.code,
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
