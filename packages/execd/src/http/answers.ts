import type { IncomingMessage, ServerResponse } from "node:http";
import { type ErrorDefinition, Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";

/** What a caller's request id may look like to be sent back: visible ASCII, bounded. */
const acceptableRequestId = /^[\x21-\x7e]{1,128}$/;

/** Answers carry the caller's `X-Request-ID` back, as OpenSandbox's execd does. */
export function echoRequestId(req: IncomingMessage, res: ServerResponse): void {
  const sent = req.headers["x-request-id"];
  if (typeof sent === "string" && acceptableRequestId.test(sent)) res.setHeader("x-request-id", sent);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Filesystem errors are the caller's path problems, not server faults. */
const byErrno: Record<string, ErrorDefinition> = {
  ENOENT: Errors.notFound,
  ENOTDIR: ExecdErrors.notADirectory,
  EISDIR: ExecdErrors.isADirectory,
  EEXIST: ExecdErrors.alreadyExists,
  EACCES: Errors.permissionDenied,
  EPERM: Errors.permissionDenied,
  ENOTEMPTY: ExecdErrors.directoryNotEmpty,
  // A mount point (the sandbox's /tmp, a volume) cannot be removed or renamed over.
  EBUSY: Errors.fileConflict,
  // A rename across file systems (into a mount, out of /proc) is not a move this call makes.
  EXDEV: Errors.invalidRequest,
  EINVAL: Errors.invalidRequest,
  ENAMETOOLONG: Errors.invalidRequest,
  ELOOP: Errors.invalidRequest,
};

/** A thrown error as the registry error it answers with. */
export function answerFor(error: unknown): PaddockError {
  if (error instanceof PaddockError) return error;
  const nodeError = error as NodeJS.ErrnoException;
  // Node refuses a path or an argument holding a NUL before any system call sees it.
  if (nodeError.code === "ERR_INVALID_ARG_VALUE" && nodeError.message.includes("null bytes"))
    return new PaddockError(Errors.invalidRequest, "paths and commands cannot contain a NUL byte");
  const mapped = nodeError.code ? byErrno[nodeError.code] : undefined;
  if (mapped) return new PaddockError(mapped, nodeError.message);
  return new PaddockError(Errors.internal, "execd failed to handle the request");
}

/** `{code, message}` with the error's status; a stream already started is cut instead. */
export function sendError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const answer = answerFor(error);
  sendJson(res, answer.status, { code: answer.code, message: answer.message });
}
