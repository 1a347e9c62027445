import type { Readable } from "node:stream";
import {
  Errors,
  isPaddockError,
  type Logger,
  newId,
  type PaddockConfig,
  PaddockError,
  parseMemoryBytes,
} from "@paddock/common";
import { Value } from "@sinclair/typebox/value";
import { type BuildFiles, readArchiveFile } from "./build-files.js";
import { BuildSpec } from "./build-spec.js";
import type { TemplateCatalog } from "./catalog.js";
import { parseDockerfile } from "./dockerfile.js";
import type { Template } from "./manifests.js";
import { BuildFailure, type BuildLimits, type StepBuilder } from "./step-builder.js";
import type {
  AccountTemplate,
  BuildLogEntry,
  TemplateBuild,
  TemplateRepository,
  TemplateSettings,
} from "./template-repository.js";

/** What an account's plan lets it hold: templates, and builds running at once. */
export interface TemplateQuota {
  plan: string;
  maxTemplates: number;
  maxBuilds: number;
}

export interface NewTemplateBuild {
  owner: string;
  name: string;
  description?: string | undefined;
  /** `cpu` and `memory` the template's sandboxes get by default. */
  resources?: Record<string, string> | undefined;
  quota: TemplateQuota;
}

/** How often a running build says it still runs, and looks for a cancel. */
const heartbeatMs = 1000;
/** A build whose server has not beaten for this long is ended as an error. */
const staleBuildMs = 60_000;
/** A build whose steps never came (E2B asks for a build, uploads, then starts it) ends after this. */
const unstartedBuildMs = 3600_000;
/** Most log entries one build keeps; later ones are counted in a last line. */
const maxLogEntries = 20_000;

const namePattern = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * Accounts' template builds (decision 0198): a build is asked for (the template is made on its
 * first build), started with its steps, run on this replica by the step builder while its
 * heartbeat and log go to the database (any replica reads them and can cancel it), and on
 * success becomes its template's current build, atomically. A build whose replica died is ended
 * as an error by whichever replica looks next.
 */
export class TemplateBuilds {
  private readonly running = new Map<string, AbortController>();
  /** Builds run at once on this server; the rest wait, beating, cancellable. */
  private readonly slots: BuildSlots;
  private readonly work = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      repository: TemplateRepository;
      catalog: TemplateCatalog;
      /** Undefined where the runtime cannot build (Kubernetes): builds are refused. */
      builder: StepBuilder | undefined;
      files: BuildFiles;
      config: PaddockConfig;
      logger: Logger;
      replica: string;
    },
  ) {
    this.slots = new BuildSlots(deps.config.templates.max_concurrent_builds);
  }

  start(): void {
    const sweep = () =>
      void this.sweepStale().catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, "sweeping stale template builds failed"),
      );
    sweep();
    this.sweeper = setInterval(sweep, staleBuildMs / 2);
    this.sweeper.unref();
  }

  /** Stops every build of this replica (each ends as an error saying why) and waits for them. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const controller of this.running.values())
      controller.abort(new BuildFailure("the server stopped during the build; build again"));
    await Promise.allSettled([...this.work]);
  }

  /** Stores an upload the account's COPY steps name (a build context, or E2B's files). */
  storeFiles(owner: string, body: Readable, name?: string): Promise<{ hash: string; bytes: number }> {
    return this.deps.files.store(owner, body, name);
  }

  hasFiles(owner: string, hash: string): boolean {
    return this.deps.files.has(owner, hash);
  }

  /** A new build of the account's template `name` (made now if new), waiting for its steps. */
  async request(input: NewTemplateBuild): Promise<{ template: AccountTemplate; build: TemplateBuild }> {
    if (!this.deps.builder) {
      throw new PaddockError(
        Errors.notImplemented,
        "this server's runtime cannot build templates (builds run on a Docker engine)",
      );
    }
    await this.assertName(input.owner, input.name);
    const now = new Date().toISOString();
    const template = await this.deps.repository.findOrCreate(
      {
        id: newId("tpl"),
        owner: input.owner,
        name: input.name,
        description: input.description ?? "",
        settings: { user: "root", workdir: "/", resources: {} },
        createdAt: now,
        updatedAt: now,
      },
      input.quota.maxTemplates,
    );
    const build: TemplateBuild = {
      id: newId("bld"),
      templateId: template.id,
      owner: input.owner,
      status: "waiting",
      reason: null,
      failedStep: null,
      spec: { from: "", steps: [] },
      settings: { user: "root", workdir: "/", resources: input.resources ?? template.settings.resources },
      image: null,
      imageBytes: null,
      createdAt: now,
      startedAt: null,
      finishedAt: null,
    };
    await this.deps.repository.insertBuild(build, input.quota.maxBuilds);
    return { template, build };
  }

  /**
   * A build of the Dockerfile at `dockerfile` in the uploaded context `files`: parsed before
   * anything is written, so a Dockerfile that cannot build here is refused with its line.
   */
  async buildDockerfile(
    input: NewTemplateBuild & { files: string; dockerfile: string; force?: boolean | undefined },
  ): Promise<{ template: AccountTemplate; build: TemplateBuild }> {
    const text = await readArchiveFile(
      await this.deps.files.open(input.owner, input.files),
      input.dockerfile,
    );
    if (text === undefined)
      throw new PaddockError(Errors.invalidTemplateBuild, `the build context has no ${input.dockerfile}`);
    const { spec, notes } = parseDockerfile(text, input.files);
    const requested = await this.request(input);
    const build = await this.run(requested.build, input.force ? { ...spec, force: true } : spec, notes);
    return { template: requested.template, build };
  }

  /** Refuses a name the account cannot build under: malformed, built in, or another's published one. */
  async assertName(owner: string, name: string): Promise<void> {
    if (!namePattern.test(name)) {
      throw new PaddockError(
        Errors.invalidRequest,
        `template name ${JSON.stringify(name.slice(0, 80))}: use 1-63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`,
      );
    }
    if (this.deps.catalog.builtIn.has(name))
      throw new PaddockError(Errors.templateNameTaken, `${name} is a built-in template's name`);
    const published = await this.deps.repository.findPublished(name);
    if (published && published.owner !== owner)
      throw new PaddockError(Errors.templateNameTaken, `${name} is a published template's name`);
  }

  /**
   * Starts a waiting build with its steps, after checking them: the base template is one the
   * account can see, every COPY's files were uploaded. `notes` open its log.
   */
  async run(build: TemplateBuild, spec: unknown, notes: string[] = []): Promise<TemplateBuild> {
    if (build.status !== "waiting")
      throw new PaddockError(
        Errors.invalidStateTransition,
        `build ${build.id} is ${build.status}, not waiting`,
      );
    let base: Template;
    try {
      base = await this.checked(build.owner, spec);
    } catch (error) {
      // Refused steps end the build: left waiting, it would hold one of the account's builds.
      if (isPaddockError(error))
        await this.deps.repository.finishBuild(build, { status: "error", reason: error.message });
      throw error;
    }
    const valid = spec as BuildSpec;
    const started: TemplateBuild = { ...build, status: "building", spec: valid };
    await this.deps.repository.markBuilding(build.id, this.deps.replica, valid);
    const controller = new AbortController();
    this.running.set(build.id, controller);
    const done = this.execute(started, base.image, base.resourceLimits, notes, controller).finally(() => {
      this.running.delete(build.id);
      this.work.delete(done);
    });
    this.work.add(done);
    return started;
  }

  /** The base template of valid steps whose files the account uploaded; else why not. */
  private async checked(owner: string, spec: unknown): Promise<Template> {
    if (!Value.Check(BuildSpec, spec)) {
      const [first] = [...Value.Errors(BuildSpec, spec)];
      throw new PaddockError(
        Errors.invalidTemplateBuild,
        `build steps: ${first?.path || "/"} ${first?.message ?? "is not valid"}`,
      );
    }
    const base = await this.deps.catalog.find(spec.from, owner);
    if (!base) {
      throw new PaddockError(
        Errors.invalidTemplateBuild,
        `no template ${spec.from} to build from; the templates are: ${(await this.deps.catalog.list(owner)).map((t) => t.id).join(", ")}`,
      );
    }
    for (const step of spec.steps) {
      if (step.type === "COPY" && !this.deps.files.has(owner, step.files))
        throw new PaddockError(
          Errors.templateFilesNotFound,
          `COPY ${step.src}: files ${step.files} were not uploaded`,
        );
    }
    return base;
  }

  /** Asks a build to stop; it ends as cancelled within about a second, on whichever replica runs it. */
  async cancel(build: TemplateBuild): Promise<void> {
    const asked = await this.deps.repository.requestCancel(build.id);
    if (!asked)
      throw new PaddockError(Errors.invalidStateTransition, `build ${build.id} has ended (${build.status})`);
    this.running.get(build.id)?.abort(new BuildFailure("cancelled"));
    // A build asked for but never started has nothing running to see the request.
    if (build.status === "waiting")
      await this.deps.repository.finishBuild(build, { status: "cancelled", reason: "cancelled" });
  }

  /** Deletes a template, its builds, logs and images; refused while a sandbox or a build uses it. */
  async remove(template: AccountTemplate): Promise<void> {
    const using = await this.deps.repository.sandboxesUsing(template.id);
    if (using) {
      throw new PaddockError(
        Errors.templateInUse,
        `${using} sandbox(es) were started from template ${template.name}; delete them first`,
      );
    }
    if (await this.deps.repository.hasUnfinishedBuild(template.id))
      throw new PaddockError(
        Errors.templateInUse,
        `template ${template.name} is being built; cancel the build first`,
      );
    const builds = await this.deps.repository.listBuilds(template.id);
    await this.deps.repository.remove(template.id);
    for (const build of builds) if (build.image) await this.deps.builder?.removeImage(build.image);
    await this.deps.builder?.pruneCache(template.owner);
  }

  /** The account's own template, by name or id. */
  async find(owner: string, nameOrId: string): Promise<AccountTemplate | undefined> {
    const template =
      (await this.deps.repository.findByName(owner, nameOrId)) ?? (await this.deps.repository.find(nameOrId));
    return template?.owner === owner ? template : undefined;
  }

  /** The account's own templates. */
  async list(owner: string): Promise<AccountTemplate[]> {
    return (await this.deps.repository.listVisible(owner)).filter((template) => template.owner === owner);
  }

  builds(template: AccountTemplate): Promise<TemplateBuild[]> {
    return this.deps.repository.listBuilds(template.id);
  }

  build(template: AccountTemplate, buildId: string): Promise<TemplateBuild | undefined> {
    return this.deps.repository.findBuild(template.id, buildId);
  }

  /** The operator publishes a template to every account, or withdraws it. */
  setPublished(template: AccountTemplate, published: boolean): Promise<void> {
    return this.deps.repository.setPublished(template.id, published);
  }

  logs(buildId: string, from: number, limit: number): Promise<BuildLogEntry[]> {
    return this.deps.repository.logs(buildId, from, limit);
  }

  private async execute(
    build: TemplateBuild,
    baseImage: string,
    baseResources: Record<string, string>,
    notes: string[],
    controller: AbortController,
  ): Promise<void> {
    const { repository, config, logger } = this.deps;
    const builder = this.deps.builder as StepBuilder;
    const limits = buildLimits(config);
    const log = new BuildLog(repository, build.id, logger);
    for (const note of notes) log.add(note, "warn");
    let timer: NodeJS.Timeout | undefined;
    let release: (() => void) | undefined;
    const heartbeat = setInterval(() => {
      void repository
        .heartbeat(build.id)
        .then((cancelled) => {
          if (cancelled) controller.abort(new BuildFailure("cancelled"));
        })
        .catch(() => undefined);
      void log.flush();
    }, heartbeatMs);
    try {
      if (!this.slots.free)
        log.add(`waiting for one of this server's ${config.templates.max_concurrent_builds} build slots`);
      release = await this.slots.take(controller.signal);
      // The time limit counts from here: a build waiting for a slot is not yet running.
      timer = setTimeout(
        () =>
          controller.abort(
            new BuildFailure(`the build ran past its time limit of ${limits.seconds} s (build time)`),
          ),
        limits.seconds * 1000,
      );
      log.add(`building ${build.spec.steps.length} steps from ${build.spec.from}`);
      const built = await builder.build({
        owner: build.owner,
        templateId: build.templateId,
        buildId: build.id,
        spec: build.spec,
        baseImage,
        limits,
        signal: controller.signal,
        log: (message, level) => log.add(message, level),
      });
      const settings: TemplateSettings = {
        user: built.user,
        workdir: built.workdir,
        resources: Object.keys(build.settings.resources).length ? build.settings.resources : baseResources,
        ...(build.spec.startCommand ? { startCommand: build.spec.startCommand } : {}),
        ...(build.spec.readyCommand ? { readyCommand: build.spec.readyCommand } : {}),
      };
      log.add(`built ${built.image}, ${(built.bytes / 1e6).toFixed(0)} MB`);
      await log.flush();
      await repository.finishBuild(
        { ...build, settings },
        { status: "ready", image: built.image, imageBytes: built.bytes },
      );
    } catch (error) {
      const failure = error instanceof BuildFailure ? error : undefined;
      const reason = failure?.message ?? `the build failed: ${(error as Error).message}`;
      if (!failure) logger.warn({ err: error, buildId: build.id }, "template build failed unexpectedly");
      log.add(reason, "error");
      await log.flush().catch(() => undefined);
      await repository
        .finishBuild(build, {
          status: reason === "cancelled" ? "cancelled" : "error",
          reason,
          failedStep: failure?.step,
        })
        .catch((writeError: unknown) => logger.error({ err: writeError }, "recording a build's end failed"));
    } finally {
      clearTimeout(timer);
      clearInterval(heartbeat);
      release?.();
    }
  }

  /** Ends the builds whose server stopped, and removes the step containers such builds left. */
  async sweepStale(): Promise<void> {
    const now = Date.now();
    const ended = await this.deps.repository.abandonStale(
      new Date(now - staleBuildMs).toISOString(),
      new Date(now - unstartedBuildMs).toISOString(),
    );
    if (ended.length) this.deps.logger.info({ builds: ended }, "ended template builds whose server stopped");
    await this.deps.builder?.removeLeftovers(async (buildId) => {
      if (this.running.has(buildId)) return false;
      return (await this.deps.repository.buildStatus(buildId)) !== "building";
    });
  }
}

/** The limits every build runs under, from `[templates]`. */
function buildLimits(config: PaddockConfig): BuildLimits {
  const settings = config.templates;
  // Sizes checked when the configuration was loaded.
  return {
    seconds: settings.build_timeout_seconds,
    cpuMillis: Math.round(Number(settings.build_cpu) * 1000),
    memoryBytes: parseMemoryBytes(settings.build_memory) as number,
    imageBytes: parseMemoryBytes(settings.max_image_size) as number,
  };
}

/** A build's log, written to the database a batch at a time; capped at `maxLogEntries`. */
class BuildLog {
  private next = 0;
  private pending: BuildLogEntry[] = [];
  private dropped = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repository: TemplateRepository,
    private readonly buildId: string,
    private readonly logger: Logger,
  ) {}

  add(message: string, level: BuildLogEntry["level"] = "info"): void {
    if (this.next >= maxLogEntries - 1 && level === "info") {
      this.dropped++;
      return;
    }
    this.pending.push({ seq: this.next++, at: new Date().toISOString(), level, message });
    if (this.pending.length >= 200) void this.flush();
  }

  flush(): Promise<void> {
    if (this.dropped) {
      this.pending.push({
        seq: this.next++,
        at: new Date().toISOString(),
        level: "warn",
        message: `${this.dropped} more lines of output were not kept (a build keeps ${maxLogEntries})`,
      });
      this.dropped = 0;
    }
    const batch = this.pending;
    this.pending = [];
    // A failed write loses its lines, not the build: logged, and the next batch tries again.
    this.writing = this.writing.then(() =>
      this.repository
        .appendLogs(this.buildId, batch)
        .catch((error: unknown) =>
          this.logger.warn({ err: error, buildId: this.buildId }, "writing a build's log failed"),
        ),
    );
    return this.writing;
  }
}

/** A fixed number of builds at once; the others wait their turn, in order, until aborted. */
class BuildSlots {
  private readonly waiting: Array<() => void> = [];

  constructor(public free: number) {}

  /** Resolves with the slot's release once one is free; rejects when `signal` aborts first. */
  async take(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.free > 0) {
      this.free--;
    } else {
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal.removeEventListener("abort", leave);
          resolve();
        };
        const leave = () => {
          this.waiting.splice(this.waiting.indexOf(turn), 1);
          reject(signal.reason);
        };
        this.waiting.push(turn);
        signal.addEventListener("abort", leave, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Handed straight to the next in line, or freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
