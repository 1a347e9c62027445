/** Every error the SDK throws; `code` is the server's stable code (see docs/errors.md). */
export class PaddockError extends Error {
  override name = "PaddockError";
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly retryable = false,
  ) {
    super(message);
  }
}

export class AuthenticationError extends PaddockError {
  override name = "AuthenticationError";
}
export class PermissionError extends PaddockError {
  override name = "PermissionError";
}
export class NotFoundError extends PaddockError {
  override name = "NotFoundError";
}
export class ConflictError extends PaddockError {
  override name = "ConflictError";
}
export class InvalidRequestError extends PaddockError {
  override name = "InvalidRequestError";
}
/** The account's plan minutes are used up (`usage_limit_reached`): creates and resumes are refused. */
export class UsageLimitError extends PaddockError {
  override name = "UsageLimitError";
}
export class RateLimitError extends PaddockError {
  override name = "RateLimitError";
}
export class ServerError extends PaddockError {
  override name = "ServerError";
}
export class TimeoutError extends PaddockError {
  override name = "TimeoutError";
}

/** A command that ran and exited non-zero (`oomKilled`: the kernel killed it for memory). */
export class CommandExitError extends PaddockError {
  override name = "CommandExitError";
  constructor(
    readonly exitCode: number,
    readonly stdout: string,
    readonly stderr: string,
    readonly oomKilled = false,
  ) {
    super(
      `command ${oomKilled ? "was killed for memory, " : ""}exited with code ${exitCode}${stderr ? `: ${stderr.trim().slice(-500)}` : ""}`,
      "command_exit",
      200,
    );
  }
}

/**
 * A template build that ended without an image: `buildStatus` is `error` (a step failed, or a
 * limit was reached; `reason` says which, `failedStep` counts from 1) or `cancelled`.
 */
export class TemplateBuildError extends PaddockError {
  override name = "TemplateBuildError";
  readonly buildId: string;
  readonly buildStatus: "error" | "cancelled";
  readonly reason: string;
  readonly failedStep: number | null;
  constructor(build: {
    id: string;
    status: string;
    reason: string | null;
    failedStep: number | null;
  }) {
    const reason = build.reason ?? build.status;
    super(
      `template build ${build.id} ${build.status === "cancelled" ? "was cancelled" : `failed: ${reason}`}`,
      build.status === "cancelled" ? "template_build_cancelled" : "template_build_failed",
      200,
    );
    this.buildId = build.id;
    this.buildStatus = build.status === "cancelled" ? "cancelled" : "error";
    this.reason = reason;
    this.failedStep = build.failedStep;
  }
}

/** The one table from an HTTP answer to an error class. */
export function errorFor(status: number, code: string, detail: string): PaddockError {
  if (status === 401) return new AuthenticationError(detail, code, status);
  if (status === 403) return new PermissionError(detail, code, status);
  if (status === 402) return new UsageLimitError(detail, code, status);
  if (status === 404) return new NotFoundError(detail, code, status);
  if (status === 409) return new ConflictError(detail, code, status);
  if (status === 429) return new RateLimitError(detail, code, status, true);
  if (status >= 500) return new ServerError(detail, code, status, status === 502 || status === 503);
  return new InvalidRequestError(detail, code, status);
}
