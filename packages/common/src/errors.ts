/**
 * The one registry of error codes. Domain code throws `PaddockError`s made from these
 * definitions; each HTTP surface renders them (`{code, detail}` on the control plane,
 * `{code, message}` on the wire-compatible runtime surfaces).
 */

export interface ErrorDefinition {
  readonly code: string;
  readonly status: number;
  readonly summary: string;
}

const registry = new Map<string, ErrorDefinition>();

export function defineError(code: string, status: number, summary: string): ErrorDefinition {
  if (!/^[a-z][a-z0-9_]*$/.test(code)) throw new Error(`error code ${code} is not snake_case`);
  if (registry.has(code)) throw new Error(`error code ${code} defined twice`);
  const definition = Object.freeze({ code, status, summary });
  registry.set(code, definition);
  return definition;
}

export function errorDefinitions(): ErrorDefinition[] {
  return [...registry.values()];
}

/** The definition registered under `code`, if any: how a code another part answered is named back. */
export function errorDefinitionOf(code: string): ErrorDefinition | undefined {
  return registry.get(code);
}

export class PaddockError extends Error {
  readonly code: string;
  readonly status: number;
  /** Seconds after which the same request may succeed: sent as `Retry-After` (rate limits). */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    definition: ErrorDefinition,
    message?: string,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message ?? definition.summary, options);
    this.name = "PaddockError";
    this.code = definition.code;
    this.status = definition.status;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export function isPaddockError(error: unknown): error is PaddockError {
  return error instanceof PaddockError;
}

export const Errors = {
  invalidRequest: defineError("invalid_request", 400, "The request is malformed or has invalid fields."),
  invalidJson: defineError("invalid_json", 400, "The request body is not valid JSON."),
  invalidUnicode: defineError(
    "invalid_unicode",
    400,
    "Text in the request is not Unicode: a JSON string with a lone UTF-16 surrogate (such as \\ud800), a body that is not UTF-8, or a query value whose percent escapes are not UTF-8.",
  ),
  unsupportedMediaType: defineError(
    "unsupported_media_type",
    415,
    "The request content type is not supported.",
  ),
  payloadTooLarge: defineError("payload_too_large", 413, "The request body is too large."),
  uriTooLong: defineError("uri_too_long", 414, "A path segment of the URL is too long."),
  headersTooLarge: defineError(
    "headers_too_large",
    431,
    "The request line and headers together are larger than the server accepts (16 KiB).",
  ),
  requestTimeout: defineError("request_timeout", 408, "The request was not received in time."),
  unauthorized: defineError("unauthorized", 401, "Missing or invalid credentials."),
  forbidden: defineError("forbidden", 403, "The credentials do not allow this operation."),
  notFound: defineError("not_found", 404, "No such route."),
  methodNotAllowed: defineError("method_not_allowed", 405, "The method is not allowed on this route."),
  sandboxNotFound: defineError("sandbox_not_found", 404, "No sandbox with that id."),
  templateNotFound: defineError(
    "template_not_found",
    404,
    "No template with that id; the detail lists the ids.",
  ),
  templateImageMissing: defineError(
    "template_image_missing",
    503,
    "The template's image is not built on this server; its operator builds it with `make templates`.",
  ),
  templateNotReady: defineError(
    "template_not_ready",
    503,
    "The template's services (its display, debugger or editor) did not answer in time.",
  ),
  invalidTemplateBuild: defineError(
    "invalid_template_build",
    400,
    "The Dockerfile or build steps cannot be built here; the detail names the line or step and why.",
  ),
  templateNameTaken: defineError(
    "template_name_taken",
    409,
    "A built-in or published template has that name; choose another.",
  ),
  templateInUse: defineError(
    "template_in_use",
    409,
    "Sandboxes (running or paused) were started from the template; delete them first.",
  ),
  templateBuildNotFound: defineError(
    "template_build_not_found",
    404,
    "No build with that id of that template.",
  ),
  templateFilesNotFound: defineError(
    "template_files_not_found",
    400,
    "A COPY step names files the account has not uploaded; upload them first.",
  ),
  templateLimitReached: defineError(
    "template_limit_reached",
    403,
    "The account holds as many templates, or runs as many builds, as its plan allows.",
  ),
  snapshotNotFound: defineError("snapshot_not_found", 404, "No snapshot with that id."),
  invalidStateTransition: defineError(
    "invalid_state",
    409,
    "The sandbox is not in a state that allows this operation.",
  ),
  quotaExceeded: defineError(
    "quota_exceeded",
    403,
    "The account is at a limit of its plan (sandboxes at once, their total disk, API keys); the detail names it. Delete what it no longer needs, or move to a larger plan.",
  ),
  sandboxOomKilled: defineError(
    "sandbox_oom_killed",
    409,
    "The sandbox used more memory than its limit and was killed; delete it and create one with a larger memory limit.",
  ),
  snapshotNotReady: defineError("snapshot_not_ready", 409, "The snapshot is not Ready."),
  snapshotBusy: defineError("snapshot_busy", 409, "The snapshot is still being created."),
  networkPolicyUnsupported: defineError(
    "network_policy_unsupported",
    400,
    "networkPolicy cannot be enforced under the configured secure runtime (gVisor without `--network=host`, gVisor on Kubernetes, Kata on Docker).",
  ),
  gpuUnavailable: defineError("gpu_unavailable", 400, "GPUs were requested but this host has none."),
  hostPathNotAllowed: defineError("host_path_not_allowed", 400, "Host-path volumes are not allowed here."),
  volumeNotFound: defineError("volume_not_found", 404, "No volume with that id or name."),
  volumeExists: defineError("volume_exists", 409, "The account already has a volume of that name."),
  volumeInUse: defineError(
    "volume_in_use",
    409,
    "The volume is mounted by sandboxes that still exist (in any state, Paused included); the detail names them. Delete them first.",
  ),
  invalidVolumeName: defineError(
    "invalid_volume_name",
    400,
    "A volume name is 1 to 63 letters, digits, `_` and `-`.",
  ),
  invalidVolumeSize: defineError(
    "invalid_volume_size",
    400,
    'A volume size is a quantity like "1Gi", from 16Mi up to the operator\'s `[volumes] max_size`.',
  ),
  volumesUnavailable: defineError(
    "volumes_unavailable",
    400,
    "This server cannot give volumes a size quota (not Docker on this host as root with overlay2, or `docker.default_disk` empty), so it offers no volumes.",
  ),
  invalidImage: defineError(
    "invalid_image",
    400,
    "The image is not a Docker image reference (name components, optional registry host and port, tag, digest).",
  ),
  imageNotFound: defineError("image_not_found", 400, "The image could not be found or pulled."),
  registryAuthFailed: defineError("registry_auth_failed", 400, "The registry refused the credentials."),
  endpointUnavailable: defineError("endpoint_unavailable", 502, "The sandbox port did not answer."),
  runtimeUnavailable: defineError("runtime_unavailable", 503, "The container runtime did not answer."),
  snapshotRegistryNotConfigured: defineError(
    "snapshot_registry_not_configured",
    503,
    "Pause and snapshots on Kubernetes push the sandbox's filesystem to a registry; the operator sets [kubernetes] snapshot_registry and snapshot_image.",
  ),
  fileNotFound: defineError("file_not_found", 404, "No such file or directory in the sandbox."),
  fileConflict: defineError(
    "file_conflict",
    409,
    "The path is in a state that does not allow this (exists, not empty, a mount point).",
  ),
  permissionDenied: defineError("permission_denied", 403, "The sandbox refused access to that path."),
  rangeNotSatisfiable: defineError(
    "range_not_satisfiable",
    416,
    "The requested byte range is outside the file.",
  ),
  languageUnavailable: defineError(
    "language_unavailable",
    400,
    "The sandbox's template has no interpreter for that language; use a template that has it (python, node, code-interpreter). execd itself answers it with 501.",
  ),
  notImplemented: defineError("not_implemented", 501, "Not implemented by this server."),
  storageFull: defineError(
    "storage_full",
    507,
    "The server's data disk is full, so nothing was changed; the same call succeeds once its operator frees space.",
  ),
  databaseUnavailable: defineError(
    "database_unavailable",
    503,
    "The server's database did not answer (restarting or unreachable); retry shortly. Running sandboxes are not affected.",
  ),
  internal: defineError("internal_error", 500, "An unexpected error occurred."),
} as const;

/**
 * The server's own state behind an error, as the error its clients get on every surface: its
 * database away (503 `database_unavailable`) or its data disk full (507 `storage_full`); otherwise
 * undefined, a fault of the server's.
 */
export function serverStateError(error: unknown): PaddockError | undefined {
  if (isDatabaseUnavailable(error))
    return new PaddockError(
      Errors.databaseUnavailable,
      "the server's database did not answer; retry shortly",
      {
        cause: error,
      },
    );
  if (isStorageFull(error))
    return new PaddockError(Errors.storageFull, "the server's data disk is full; nothing was changed", {
      cause: error,
    });
  return undefined;
}

/**
 * Whether an error is PostgreSQL being away: refusing connections, shutting down or starting
 * (SQLSTATE classes 08 and 57P), or a connection it cut. A refused connect counts only from the
 * pool's own connect (its stack names pg-pool), not from the engine's socket or a sandbox.
 */
function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message, stack } = (error ?? {}) as { code?: unknown; message?: unknown; stack?: unknown };
  if (typeof code === "string" && (/^08/.test(code) || /^57P0/.test(code))) return true;
  if (typeof message === "string" && /^Connection terminated/.test(message)) return true;
  return (
    (code === "ECONNREFUSED" || code === "ETIMEDOUT" || code === "EHOSTUNREACH") &&
    typeof stack === "string" &&
    stack.includes("pg-pool")
  );
}

/**
 * Whether an error, or one it was caused by, is the server's own disk being full: the kernel's
 * ENOSPC, SQLite's SQLITE_FULL, or a tool (mkfs, the engine) saying so in its message.
 */
function isStorageFull(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 8; depth++) {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (code === "ENOSPC" || code === "SQLITE_FULL") return true;
    if (typeof message === "string" && /no space left on device|database or disk is full/i.test(message))
      return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Codes execd answers with (`{code, message}`) that no other part defines; the control plane
 * passes them on under the same code. execd's other codes are shared with the lists above
 * (`invalid_request`, `not_found`, ...) or the control plane's (`permission_denied`, ...).
 */
export const ExecdErrors = {
  contextBusy: defineError(
    "context_busy",
    409,
    "The code context is already running code; wait for it, interrupt it, or use another context.",
  ),
  contextNotFound: defineError("context_not_found", 404, "No code context with that id."),
  sessionNotFound: defineError("session_not_found", 404, "No session with that id."),
  commandNotFound: defineError("command_not_found", 404, "No command or background run with that id."),
  terminalNotFound: defineError("terminal_not_found", 404, "No terminal with that id (it has exited)."),
  sessionBusy: defineError("session_busy", 409, "The session is already running a command."),
  sessionDead: defineError("session_dead", 409, "The isolated session has no processes left; delete it."),
  notADirectory: defineError("not_a_directory", 400, "A component of the path is not a directory."),
  isADirectory: defineError("is_a_directory", 400, "The path is a directory; this operation needs a file."),
  notSupported: defineError("not_supported", 501, "The sandbox's runtime does not support this option."),
  cannotStartProcess: defineError("cannot_start_process", 503, "The sandbox could not start the process."),
  kernelUnavailable: defineError(
    "kernel_unavailable",
    503,
    "The code context's kernel could not be restarted; create a new context.",
  ),
  agentFailed: defineError("agent_failed", 502, "The isolated session's agent did not run the request."),
  notAnOverlay: defineError(
    "not_an_overlay",
    400,
    "Only isolated sessions with an overlay workspace have changes to list.",
  ),
  bindNotAllowed: defineError(
    "bind_not_allowed",
    400,
    "An isolated session may bind only /workspace, /mnt, /media, /data and paths under them.",
  ),
  isolationUnavailable: defineError(
    "isolation_unavailable",
    503,
    "The isolated session's agent did not start in time.",
  ),
  alreadyExists: defineError("already_exists", 409, "A file or directory already exists at that path."),
  directoryNotEmpty: defineError("directory_not_empty", 409, "The directory is not empty."),
  bashUnavailable: defineError("bash_unavailable", 501, "The sandbox's image has no /bin/bash."),
} as const;
