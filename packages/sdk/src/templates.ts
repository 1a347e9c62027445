import { errorFor, InvalidRequestError, PaddockError, TemplateBuildError } from "./errors.js";
import type { RequestOptions, Transport } from "./transport.js";
import type {
  AccountTemplate,
  AccountTemplateDetail,
  BuildLogEntry,
  BuildLogPage,
  BuildStarted,
  StepsBuildRequest,
  TemplateBuild,
} from "./types.js";
import { encodePart, queryOf } from "./url.js";

/** What every build takes beside its source. */
export interface BuildOptions extends RequestOptions {
  description?: string;
  /** What sandboxes of the template get, like `{ cpu: "2", memory: "2Gi" }` (default: the base's). */
  resourceLimits?: { cpu?: string; memory?: string };
  /** Run every step again, none taken from the cache. */
  force?: boolean;
  /** Called with each log line while the build runs: steps, their output, the end. */
  onLog?: (entry: BuildLogEntry) => void;
}

export interface ContextBuildOptions extends BuildOptions {
  /** The build context: a directory, packed and sent as `docker build` would (default: the working directory). */
  context?: string;
  /** The Dockerfile's path in the context (default: `Dockerfile`). */
  dockerfile?: string;
}

export type StepsBuildOptions = BuildOptions &
  Omit<StepsBuildRequest, "description" | "resourceLimits" | "force">;

export interface FollowOptions {
  /** The first log entry wanted, by `seq` (default 0: from the start). */
  from?: number;
  onLog?: (entry: BuildLogEntry) => void;
  signal?: AbortSignal;
}

/** How many times in a row a followed log is picked up again after its stream broke off. */
const followRetries = 5;
const followRetryDelayMs = 1000;
/** The wait for a cancel's answer after the caller's own signal has gone. */
const cancelTimeoutMs = 10_000;

/**
 * `client.templates`: the account's own templates, built from a Dockerfile and its context or from
 * a template and steps; sandboxes start from them by name (`Sandbox.create({ template })`).
 */
export class Templates {
  constructor(private readonly transport: Transport) {}

  /**
   * Builds template `name` from a directory holding a Dockerfile (Node only) and waits for the
   * build, calling `onLog` with each line. Resolves with the build once ready; rejects with a
   * TemplateBuildError when it fails or is cancelled. Aborting `signal` stops waiting and cancels
   * the build on the server.
   */
  async build(name: string, options: ContextBuildOptions = {}): Promise<TemplateBuild> {
    const context = options.context ?? ".";
    const dockerfile = options.dockerfile ?? "Dockerfile";
    const { isFileIn, packDirectory } = await import("./context-archive.js");
    if (!(await isFileIn(context, dockerfile)))
      throw new InvalidRequestError(
        `no ${dockerfile} in ${context}: pass \`dockerfile\` with its path in the context`,
        "invalid_build_context",
        0,
      );
    const query = queryOf({
      dockerfile: options.dockerfile,
      description: options.description,
      cpu: options.resourceLimits?.cpu,
      memory: options.resourceLimits?.memory,
      force: options.force || undefined,
    });
    const started = await this.started(options.signal, async () => {
      const response = await this.transport.fetch(
        "POST",
        `${buildsPath(name)}${query}`,
        await packDirectory(context, [dockerfile, ".dockerignore"]),
        { ...requestOf(options), raw: true, headers: { "content-type": "application/gzip" } },
      );
      return (await response.json()) as BuildStarted;
    });
    return this.finish(name, started, options);
  }

  /** Builds template `name` from a template (`from`) and `steps`; waits as `build` does. */
  async buildFromSteps(name: string, options: StepsBuildOptions): Promise<TemplateBuild> {
    const { onLog: _onLog, signal: _signal, requestTimeoutMs: _timeout, ...body } = options;
    const started = await this.started(options.signal, () =>
      this.transport.json<BuildStarted>("POST", buildsPath(name), body, requestOf(options)),
    );
    return this.finish(name, started, options);
  }

  /** Uploads a directory's files (Node only) for COPY steps; answers the hash a step's `files` names. */
  async uploadFiles(directory: string, options: RequestOptions = {}): Promise<string> {
    const { packDirectory } = await import("./context-archive.js");
    const response = await this.transport.fetch("POST", "/templates/files", await packDirectory(directory), {
      ...requestOf(options),
      raw: true,
      headers: { "content-type": "application/gzip" },
    });
    return ((await response.json()) as { hash: string }).hash;
  }

  /** The account's own templates (`Sandbox.templates()` lists every one it can start from). */
  async list(options: RequestOptions = {}): Promise<AccountTemplate[]> {
    return (await this.transport.json<{ items: AccountTemplate[] }>("GET", "/templates", undefined, options))
      .items;
  }

  /** One of the account's templates with its builds; NotFoundError for any other name. */
  get(name: string, options: RequestOptions = {}): Promise<AccountTemplateDetail> {
    return this.transport.json("GET", `/templates/${encodePart(name)}`, undefined, options);
  }

  /** Deletes the template, its builds and images; refused (`template_in_use`) while sandboxes run from it. */
  async delete(name: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.fetch("DELETE", `/templates/${encodePart(name)}`, undefined, options);
  }

  getBuild(name: string, buildId: string, options: RequestOptions = {}): Promise<TemplateBuild> {
    return this.transport.json("GET", buildPath(name, buildId), undefined, options);
  }

  /** Asks a running build to stop; it ends `cancelled` shortly after. */
  cancel(name: string, buildId: string, options: RequestOptions = {}): Promise<TemplateBuild> {
    return this.transport.json("POST", `${buildPath(name, buildId)}/cancel`, undefined, options);
  }

  /** A page of a build's log from entry `from` on; `next` is where the following page starts. */
  logs(
    name: string,
    buildId: string,
    options: RequestOptions & { from?: number; limit?: number } = {},
  ): Promise<BuildLogPage> {
    const query = queryOf({ from: options.from ?? 0, limit: options.limit });
    return this.transport.json(
      "GET",
      `${buildPath(name, buildId)}/logs${query}`,
      undefined,
      requestOf(options),
    );
  }

  /**
   * Follows a build's log live, calling `onLog` with each entry, and resolves with the build once
   * it has ended, whatever its status. A stream that breaks off is picked up where it stopped.
   */
  async follow(name: string, buildId: string, options: FollowOptions = {}): Promise<TemplateBuild> {
    let next = options.from ?? 0;
    let failures = 0;
    for (;;) {
      const events = this.transport.events(`${buildPath(name, buildId)}/logs?from=${next}`, undefined, {
        ...(options.signal ? { signal: options.signal } : {}),
        headers: { accept: "text/event-stream" },
      });
      let broken: unknown;
      try {
        for (;;) {
          // Only the stream's own failures are retried; one thrown by `onLog` ends the call.
          const item = await events.next().catch((error: unknown) => {
            broken = error;
            return undefined;
          });
          if (!item || item.done) break;
          const { type, ...fields } = item.value;
          if (type === "status") return fields as unknown as TemplateBuild;
          if (type === "error") {
            broken = errorFor(Number(fields.status ?? 502), String(fields.code), String(fields.detail));
            break;
          }
          if (type === "log") {
            const entry = fields as unknown as BuildLogEntry;
            next = entry.seq + 1;
            failures = 0;
            options.onLog?.(entry);
          }
        }
      } finally {
        await events.return(undefined);
      }
      options.signal?.throwIfAborted();
      if (broken !== undefined) {
        const transient = !(broken instanceof PaddockError) || broken.retryable;
        if (!transient || ++failures > followRetries) throw broken;
      }
      // The stream ended before the build did (a restart, a proxy's limit): go on from `next`.
      await new Promise((resolve) => setTimeout(resolve, followRetryDelayMs));
      options.signal?.throwIfAborted();
    }
  }

  /** Starts a build; an abort before it is known rejects with the signal's reason. */
  private async started(
    signal: AbortSignal | undefined,
    start: () => Promise<BuildStarted>,
  ): Promise<BuildStarted> {
    try {
      return await start();
    } catch (error) {
      signal?.throwIfAborted();
      throw error;
    }
  }

  /** Follows a started build to its end: the build when ready, else a TemplateBuildError. */
  private async finish(name: string, started: BuildStarted, options: BuildOptions): Promise<TemplateBuild> {
    const buildId = started.build.id;
    let build: TemplateBuild;
    try {
      build = await this.follow(name, buildId, {
        ...(options.onLog ? { onLog: options.onLog } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) {
        // Stopping the wait stops the build: no one is left to use what it would make.
        await this.cancel(name, buildId, { requestTimeoutMs: cancelTimeoutMs }).catch(() => undefined);
        throw options.signal.reason;
      }
      throw error;
    }
    if (build.status === "ready") return build;
    throw new TemplateBuildError(build);
  }
}

function buildsPath(name: string): string {
  return `/templates/${encodePart(name)}/builds`;
}

function buildPath(name: string, buildId: string): string {
  return `${buildsPath(name)}/${encodePart(buildId)}`;
}

function requestOf(options: RequestOptions): RequestOptions {
  return {
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
