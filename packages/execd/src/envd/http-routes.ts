import { createReadStream } from "node:fs";
import { stat, statfs } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { sendJson } from "../http/answers.js";
import * as fileRoutes from "../http/file-routes.js";
import { searchParams } from "../http/request.js";
import { type Route, route } from "../http/router.js";
import type { Metrics } from "../metrics/metrics.js";
import { ConnectError, httpStatusOf, toConnectError } from "./connect.js";
import { type FileMetadataStore, metadataFromHeaders } from "./file-metadata.js";
import { receiveUpload } from "./files-upload.js";
import { envdUser, resolvePath } from "./files-user.js";

/**
 * envd's plain HTTP routes (specs/e2b/envd/envd.yaml): `/health` and `/files`, which E2B's SDKs
 * call, and `/metrics`, which the server's E2B API reads for `getMetrics`. (`/envs` and `/init`
 * are E2B's orchestrator's.)
 */
export function envdHttpRoutes(
  prefix: string,
  deps: { metrics: Metrics; fileMetadata: FileMetadataStore },
): Route[] {
  return [
    route("GET", `${prefix}/health`, (_req, res) => {
      res.writeHead(204);
      res.end();
    }),
    route("GET", `${prefix}/metrics`, async (_req, res) =>
      sendJson(res, 200, await envdMetrics(deps.metrics)),
    ),
    route("GET", `${prefix}/files`, (req, res, url) => answer(res, download(req, res, url))),
    route("POST", `${prefix}/files`, (req, res, url) =>
      answer(
        res,
        (async () => {
          const query = searchParams(url);
          const metadata = metadataFromHeaders(req.headersDistinct);
          const user = await envdUser(query.get("username") || undefined);
          sendJson(
            res,
            200,
            await receiveUpload(req, user, query.get("path") || undefined, {
              metadata,
              store: deps.fileMetadata,
            }),
          );
        })(),
      ),
    ),
  ];
}

/** envd's `Metrics`: CPU since the previous sample, memory in bytes and MiB, the root disk. */
async function envdMetrics(metrics: Metrics) {
  const sample = metrics.snapshot();
  const disk = await statfs("/");
  const mib = 2 ** 20;
  return {
    ts: Math.floor(sample.timestamp / 1000),
    cpu_count: sample.cpu_count,
    cpu_used_pct: sample.cpu_used_pct,
    mem_total: Math.round(sample.mem_total_mib * mib),
    mem_used: Math.round(sample.mem_used_mib * mib),
    mem_total_mib: Math.round(sample.mem_total_mib),
    mem_used_mib: Math.round(sample.mem_used_mib),
    disk_used: (disk.blocks - disk.bfree) * disk.bsize,
    disk_total: disk.blocks * disk.bsize,
  };
}

/**
 * Answers a failure as envd does, `{code: <HTTP status>, message}`: E2B's SDKs show the message
 * and pick the error class by status (404 a FileNotFoundError, 507 a NotEnoughSpaceError).
 */
async function answer(res: ServerResponse, work: Promise<void>): Promise<void> {
  try {
    await work;
  } catch (error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if ((error as NodeJS.ErrnoException).code === "ENOSPC") {
      sendJson(res, 507, { code: 507, message: "not enough disk space available" });
      return;
    }
    const failure = toConnectError(error);
    const status = httpStatusOf(failure.code);
    sendJson(res, status, { code: status, message: failure.message });
  }
}

/**
 * Whether to send a download gzip-compressed. envd compresses whenever gzip is acceptable, but
 * fetch() lists gzip among the codings it decodes on every request; only a client that names
 * gzip alone (the SDKs' `gzip: true`) asked for it, and compressing costs the sandbox's CPU.
 */
function gzipAsked(req: IncomingMessage): boolean {
  const codings = (req.headers["accept-encoding"] ?? "").split(",").filter((coding) => coding.trim());
  if (codings.length !== 1) return false;
  const [name = "", ...parameters] = (codings[0] as string).split(";");
  return (
    name.trim().toLowerCase() === "gzip" &&
    !parameters.some((parameter) => /^\s*q=0(\.0*)?\s*$/.test(parameter))
  );
}

/** envd's `GET /files?path=&username=`: the file's bytes, streamed. */
async function download(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const query = searchParams(url);
  const user = await envdUser(query.get("username") || undefined);
  const path = resolvePath(query.get("path") ?? "", user);
  const stats = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") throw new ConnectError("not_found", `path '${path}' does not exist`);
    throw error;
  });
  if (stats.isDirectory()) throw new ConnectError("invalid_argument", `path '${path}' is a directory`);
  if (gzipAsked(req) && !req.headers.range) {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-encoding": "gzip" });
    await pipeline(createReadStream(path, { highWaterMark: 1024 * 1024 }), createGzip(), res);
    return;
  }
  // execd's own download streams the file, Range requests included.
  await fileRoutes.download(new URL(`http://execd/?path=${encodeURIComponent(path)}`), req, res);
}
