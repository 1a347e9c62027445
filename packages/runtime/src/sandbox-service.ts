import { posix } from "node:path";
import {
  deriveSecret,
  Errors,
  EXECD_MOUNT,
  fieldPath,
  invalidField,
  type Logger,
  newId,
  type PaddockConfig,
  PaddockError,
  type Page,
  paginate,
} from "@paddock/common";
import { parsePolicy } from "@paddock/common/egress-policy";
import { ExecdClient } from "./execd/client.js";
import { imageReferenceProblem } from "./image-reference.js";
import { idleAtFrom, resolveLifecycle } from "./lifecycle.js";
import type { LifecycleLog } from "./lifecycle-log.js";
import type { CreateSandboxInput, Sandbox, SandboxFilter, SandboxLifecycle } from "./model.js";
import type { WarmPools } from "./pool.js";
import { waitForHttp } from "./readiness.js";
import type { Runtime, WorkloadExit } from "./runtime.js";
import { SandboxActivity } from "./sandbox-activity.js";
import type { ChangeListener, SandboxChanges } from "./sandbox-changes.js";
import type { PauseOptions, SandboxOperations } from "./sandbox-operations.js";
import type { SandboxRepository } from "./sandbox-repository.js";
import type { SnapshotRepository } from "./snapshot-repository.js";
import { assertTransition, InvalidTransitionError, type SandboxState } from "./state-machine.js";
import type { TemplateCatalog } from "./templates/catalog.js";
import type { Template } from "./templates/manifests.js";
import {
  hostPathAllowed,
  type ParsedResources,
  parseResourceLimits,
  validateLaunch,
  validateMetadata,
} from "./validation.js";
import type { VolumeService } from "./volume-service.js";

export interface SandboxServiceDeps {
  runtime: Runtime;
  sandboxes: SandboxRepository;
  snapshots: SnapshotRepository;
  log: LifecycleLog;
  config: PaddockConfig;
  logger: Logger;
  secretKey: string;
  /** Built-in templates, the account's own and published ones (decision 0198). */
  templates: TemplateCatalog;
  /** What the repository's writes publish, for watchers of an account's sandboxes. */
  changes: SandboxChanges;
  /** The volume registry, which resolves a create's volumes to host directories. */
  volumes: VolumeService;
  /** Background work (pause, resume) is tracked so shutdown can wait for it. */
  track: (work: Promise<unknown>) => void;
}

/** Label holding what the reconciler needs to adopt a container the database lost. */
export const recordLabel = "paddock.record";
const defaultSnapshotEntrypoint = ["tail", "-f", "/dev/null"];

/** Where a registry volume may be mounted: not over the root or the daemon's own files. */
function volumeMountPathAllowed(path: string): boolean {
  return (
    posix.isAbsolute(path) &&
    posix.normalize(path) === path &&
    path !== "/" &&
    !path.endsWith("/") &&
    path !== EXECD_MOUNT &&
    !path.startsWith(`${EXECD_MOUNT}/`)
  );
}

function invalid(message: string): never {
  throw new PaddockError(Errors.invalidRequest, message);
}

/** The sandbox lifecycle over the runtime and the database. */
export class SandboxService implements SandboxOperations {
  /**
   * Sandbox addresses, so the proxy does not ask the engine on every request. An entry holds
   * while the record's last transition is the one it was learnt under: another replica may have
   * paused and resumed the sandbox since, and an engine may give a resumed workload a new address.
   */
  private readonly addresses = new Map<string, { host: string; since: string }>();

  private pools: WarmPools | undefined;
  /** Resumes in flight on this replica, so concurrent callers share one. */
  private readonly resuming = new Map<string, Promise<void>>();
  private resumeAllowed: ((sandbox: Sandbox) => Promise<void>) | undefined;
  /** Uses of sandboxes, written to their rows a few at a time (decision 0190). */
  readonly activity: SandboxActivity;

  constructor(private readonly deps: SandboxServiceDeps) {
    this.activity = new SandboxActivity(deps.sandboxes, deps.logger);
  }

  /** Creates for a template are served from these warm pools when they have a sandbox ready. */
  usePools(pools: WarmPools): void {
    this.pools = pools;
  }

  async create(request: CreateSandboxInput): Promise<Sandbox> {
    const template = request.template
      ? await this.deps.templates.resolve(request.template, request.owner)
      : undefined;
    const input = withTemplateDefaults(request, template);
    // One set of checks for both paths: a warm sandbox is no excuse to skip them.
    const { resources, lifecycle } = this.validateCreate(input);
    const claimed = await this.pools?.claim(input, lifecycle, template);
    if (claimed) return claimed;
    return this.createCold(input, resources, lifecycle, template);
  }

  /** The checks every create passes, warm or cold; returns the parsed resource limits and lifecycle. */
  private validateCreate(input: CreateSandboxInput): {
    resources: ParsedResources;
    lifecycle: SandboxLifecycle;
  } {
    const { runtime, config } = this.deps;
    if (Boolean(input.image) === Boolean(input.snapshotId))
      invalid(invalidField("body", 'give exactly one of "image" or "snapshotId"'));
    if (input.image && !input.entrypoint?.length)
      invalid(invalidField("body.entrypoint", "is required, with at least one item, when image is given"));
    if (input.image) {
      const problem = imageReferenceProblem(input.image.uri);
      if (problem) throw new PaddockError(Errors.invalidImage, problem);
    }
    if (input.timeout !== undefined && input.timeout !== null) {
      if (!Number.isInteger(input.timeout) || input.timeout < 1)
        invalid(invalidField("body.timeout", "must be a positive integer of seconds"));
      if (input.timeout > config.server.max_sandbox_timeout_seconds) {
        invalid(
          invalidField(
            "body.timeout",
            `must be <= ${config.server.max_sandbox_timeout_seconds} seconds (server.max_sandbox_timeout_seconds)`,
          ),
        );
      }
    }
    const lifecycle = resolveLifecycle(input, config.server.max_sandbox_timeout_seconds);
    validateMetadata(input.metadata ?? {});
    validateLaunch(input.entrypoint ?? [], input.env ?? {});
    const resources = parseResourceLimits({
      cpu: config.docker.default_cpu,
      memory: config.docker.default_memory,
      ...(config.docker.default_disk ? { "ephemeral-storage": config.docker.default_disk } : {}),
      ...input.resourceLimits,
    });
    if (resources.gpus && resources.gpus > 0 && !runtime.hasGpu()) {
      throw new PaddockError(
        Errors.gpuUnavailable,
        `resourceLimits.gpu = ${resources.gpus}, but this host offers no GPU to sandboxes`,
      );
    }
    if (input.networkPolicy && !runtime.secureRuntime.supportsNetworkPolicy) {
      throw new PaddockError(
        Errors.networkPolicyUnsupported,
        `networkPolicy needs the egress sidecar's nftables rules, which do not reach the sockets of sandboxes under the ${runtime.secureRuntime.type} secure runtime here (gVisor's own netstack has no NAT table; on Kubernetes the sidecar would run inside the same gVisor pod; a Kata guest's packets on Docker pass none of the sidecar's hooks); create the sandbox without networkPolicy, or in Docker mode register runsc with --network=host, or run this server with secure_runtime.type = ""`,
      );
    }
    if (
      input.platform &&
      (input.platform.os !== "linux" || input.platform.arch !== process.arch.replace("x64", "amd64"))
    ) {
      invalid(
        invalidField(
          "body.platform",
          `${input.platform.os}/${input.platform.arch} cannot be satisfied by this host`,
        ),
      );
    }
    const mountPaths = new Set<string>();
    for (const [index, volume] of (input.volumes ?? []).entries()) {
      const where = fieldPath("body.volumes", index);
      if (mountPaths.has(volume.mountPath))
        invalid(invalidField(`${where}.mountPath`, "is the mount path of another volume of this sandbox"));
      mountPaths.add(volume.mountPath);
      if (volume.named && !volumeMountPathAllowed(volume.mountPath))
        invalid(
          invalidField(
            `${where}.mountPath`,
            `must be a plain absolute path other than / and outside ${EXECD_MOUNT}`,
          ),
        );
      const backends = [volume.host, volume.pvc, volume.ossfs, volume.named].filter(Boolean).length;
      if (backends !== 1 || volume.managed)
        invalid(invalidField(where, `(${volume.name}) must have exactly one backend (host or pvc)`));
      if (volume.ossfs) invalid(invalidField(`${where}.ossfs`, "is not supported by this runtime"));
      if (volume.subPath?.split("/").includes(".."))
        invalid(invalidField(`${where}.subPath`, "must not contain '..'"));
      if (volume.subPath?.startsWith("/"))
        invalid(invalidField(`${where}.subPath`, "must be relative to the volume, not absolute"));
      if (volume.host && !hostPathAllowed(volume.host.path, config.docker.allowed_host_paths)) {
        throw new PaddockError(
          Errors.hostPathNotAllowed,
          `host path ${volume.host.path} is not under an allowed prefix; the operator must list it in docker.allowed_host_paths`,
        );
      }
    }
    return { resources, lifecycle };
  }

  private async createCold(
    input: CreateSandboxInput,
    resources: ParsedResources,
    lifecycle: SandboxLifecycle,
    template: Template | undefined,
  ): Promise<Sandbox> {
    const { runtime } = this.deps;
    let image = input.image?.uri;
    let entrypoint = input.entrypoint;
    if (input.snapshotId) {
      const snapshot = await this.deps.snapshots.find(input.snapshotId);
      if (!snapshot || (input.owner !== undefined && snapshot.owner !== input.owner)) {
        throw new PaddockError(Errors.snapshotNotFound, `no snapshot ${input.snapshotId}`);
      }
      if (snapshot.status.state !== "Ready" || !snapshot.imageRef) {
        throw new PaddockError(
          Errors.snapshotNotReady,
          `snapshot ${snapshot.id} is ${snapshot.status.state}, not Ready`,
        );
      }
      image = snapshot.imageRef;
      entrypoint ??= snapshot.entrypoint.length ? snapshot.entrypoint : defaultSnapshotEntrypoint;
    }
    if (!image || !entrypoint) throw new Error("unreachable: image and entrypoint resolved above");
    // A template started from its own image, whose services must answer before it is Running.
    const services = template?.image === image ? template : undefined;
    if (services && !(await runtime.hasImage(image))) {
      throw new PaddockError(
        Errors.templateImageMissing,
        services.account
          ? `template ${services.id} has no image on this server (${image}); build it again`
          : `template ${services.id} has no image on this server (${image}); build it with \`make templates\` or \`paddock templates build ${services.id}\``,
      );
    }

    const now = new Date();
    const idleAt = idleAtFrom(lifecycle, now.getTime());
    const sandbox: Sandbox = {
      id: newId("sbx"),
      owner: input.owner ?? null,
      status: { state: "Pending", reason: "creating", lastTransitionAt: now.toISOString() },
      ...(input.image ? { image: { uri: input.image.uri } } : {}),
      ...(input.snapshotId ? { snapshotId: input.snapshotId } : {}),
      ...(input.template ? { template: input.template } : {}),
      entrypoint,
      metadata: input.metadata ?? {},
      extensions: input.extensions ?? {},
      resourceLimits: input.resourceLimits ?? {},
      ...(input.platform ? { platform: input.platform } : {}),
      // Validated and canonical (CIDRs masked, duplicates dropped) before any container exists.
      ...(input.networkPolicy
        ? { networkPolicy: parsePolicy(input.networkPolicy, "body.networkPolicy") }
        : {}),
      secureAccess: input.secureAccess ?? false,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      ...(input.timeout ? { expiresAt: new Date(now.getTime() + input.timeout * 1000).toISOString() } : {}),
      ...(input.pooledFor ? { pooledFor: input.pooledFor } : {}),
      lifecycle,
      lastActivityAt: now.toISOString(),
      ...(idleAt ? { idleAt } : {}),
    };
    // Registry volumes (decision 0192) resolved to their host directories, recorded with the sandbox.
    const volumes = await this.deps.volumes.resolve(sandbox.owner, input.volumes ?? []);
    // Refused here (quota_exceeded) before anything exists that would need cleaning up.
    await this.deps.sandboxes
      .insert(sandbox, {
        diskBytes: resources.diskBytes ?? null,
        quota: input.quota,
        volumes: volumes.attachments,
      })
      .catch(async (error: unknown) => {
        await volumes.rollback();
        throw error;
      });
    await this.deps.log.record(
      sandbox.id,
      "Pending",
      `creating from ${input.snapshotId ? `snapshot ${input.snapshotId}` : image}`,
    );
    try {
      // A template's image was found above; any other may need pulling.
      if (!services) await runtime.ensureImage(image, input.image?.auth);
      const tokens = this.tokens(sandbox.id);
      const workload = await runtime.createWorkload({
        sandboxId: sandbox.id,
        image,
        ...(input.image?.auth ? { imageAuth: input.image.auth } : {}),
        entrypoint,
        env: input.env ?? {},
        labels: { [recordLabel]: JSON.stringify(adoptionRecord(sandbox)) },
        ...resources,
        volumes: volumes.volumes,
        ...(input.networkPolicy ? { networkPolicy: input.networkPolicy } : {}),
        execdToken: tokens.execd,
        egressToken: tokens.egress,
      });
      if (services) await this.waitForServices(services, sandbox.id, workload.address);
      const moved = await this.deps.sandboxes.setState(sandbox.id, "Pending", "Running", {
        reason: "created",
        containerId: workload.containerId,
      });
      if (!moved) {
        // Deleted while being created: the delete owns the cleanup.
        throw new PaddockError(
          Errors.sandboxNotFound,
          `sandbox ${sandbox.id} was deleted while it was being created`,
        );
      }
      await this.deps.log.record(
        sandbox.id,
        "Running",
        `container ${workload.containerId.slice(0, 12)} ready`,
      );
      const running = await this.get(sandbox.id, undefined, { includePooled: true });
      this.rememberAddress(sandbox.id, workload.address, running.status.lastTransitionAt);
      return running;
    } catch (error) {
      this.deps.logger.warn({ sandboxId: sandbox.id, err: error }, "create failed");
      this.addresses.delete(sandbox.id);
      await runtime.removeWorkload(sandbox.id).catch(() => undefined);
      await this.deps.sandboxes.remove(sandbox.id);
      await this.deps.log.forget(sandbox.id);
      await volumes.rollback();
      throw error;
    }
  }

  /**
   * Holds until every port the template marks `ready` answers (a desktop's VNC, a browser's
   * debugger), and its ready command exits 0.
   */
  private async waitForServices(template: Template, sandboxId: string, address: string): Promise<void> {
    const timeoutMs = this.deps.config.runtime.create_timeout_seconds * 1000;
    const stillAlive = async () =>
      (await this.deps.runtime.inspectWorkload(sandboxId)).state === "running"
        ? undefined
        : "the sandbox stopped while its services were starting";
    if (template.readyCommand) await this.waitForReadyCommand(template, sandboxId, address, timeoutMs);
    await Promise.all(
      template.ports.map(async ({ port, name, ready }) => {
        if (!ready) return;
        try {
          await waitForHttp(`http://${address}:${port}${ready}`, {
            timeoutMs,
            intervalMs: 50,
            accept: (status) => status < 400,
            stillAlive,
          });
        } catch (error) {
          throw new PaddockError(
            Errors.templateNotReady,
            `template ${template.id}: ${name} (port ${port}) did not answer GET ${ready}: ${(error as Error).message}`,
          );
        }
      }),
    );
  }

  /** Runs the template's ready command until it exits 0; 503 `template_not_ready` past the create timeout. */
  private async waitForReadyCommand(
    template: Template,
    sandboxId: string,
    address: string,
    timeoutMs: number,
  ): Promise<void> {
    const execd = ExecdClient.at(this, sandboxId, address);
    const deadline = Date.now() + timeoutMs;
    let last = "it never ran";
    while (Date.now() < deadline) {
      const signal = AbortSignal.timeout(Math.max(1000, deadline - Date.now()));
      let exitCode = -1;
      try {
        for await (const event of execd.runCommand({ command: template.readyCommand as string }, signal)) {
          if (event.type === "execution_complete" || event.type === "error")
            exitCode = Number(event.exit_code ?? -1);
        }
        if (exitCode === 0) return;
        last = `it exited with ${exitCode}`;
      } catch (error) {
        last = (error as Error).message;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new PaddockError(
      Errors.templateNotReady,
      `template ${template.id}: its ready command did not exit 0 within ${timeoutMs / 1000} s (${last})`,
    );
  }

  async get(id: string, owner?: string | null, options: { includePooled?: boolean } = {}): Promise<Sandbox> {
    const sandbox = await this.deps.sandboxes.find(id);
    const hidden = sandbox?.pooledFor !== undefined && !options.includePooled;
    if (!sandbox || hidden || (owner !== undefined && sandbox.owner !== owner)) {
      throw new PaddockError(Errors.sandboxNotFound, `no sandbox ${id}`);
    }
    return sandbox;
  }

  async list(filter: SandboxFilter): Promise<Page<Sandbox>> {
    const all = await this.deps.sandboxes.findAll({
      ...(filter.owner !== undefined ? { owner: filter.owner } : {}),
      ...(filter.states ? { states: filter.states } : {}),
      ...(filter.template !== undefined ? { template: filter.template } : {}),
    });
    const wanted = Object.entries(filter.metadata ?? {});
    const matching = all.filter((sandbox) => wanted.every(([key, value]) => sandbox.metadata[key] === value));
    return paginate(matching, filter.page, filter.pageSize);
  }

  async delete(id: string, owner?: string | null, reason = "user_delete"): Promise<void> {
    const sandbox = await this.get(id, owner, { includePooled: owner === undefined });
    const from = sandbox.status.state;
    if (from !== "Stopping") {
      assertTransition(from, "Stopping", "delete");
      if (!(await this.deps.sandboxes.setState(id, from, "Stopping", { reason })))
        return this.delete(id, owner, reason);
    }
    await this.deps.log.record(id, "Stopping", reason);
    this.addresses.delete(id);
    try {
      await this.deps.runtime.removeWorkload(id);
    } catch (error) {
      await this.deps.sandboxes.setState(id, "Stopping", "Failed", {
        reason: "delete_failed",
        message: String((error as Error).message),
      });
      throw error;
    }
    await this.deps.sandboxes.remove(id);
    await this.deps.log.forget(id);
  }

  /**
   * Pauses in the background (Pausing now, Paused when the engine is done): in memory, or to disk
   * (decision 0190). A sandbox already paused in memory may go on to disk; one already where it
   * was asked to go is a 409, as a second pause always was.
   */
  async pause(id: string, owner?: string | null, options: PauseOptions = {}): Promise<Sandbox> {
    const sandbox = await this.get(id, owner); // someone else's sandbox is not found, whatever the engine can do
    const refused = this.deps.runtime.unavailable("pause");
    if (refused) throw refused;
    const to = options.to ?? "memory";
    const from = sandbox.status.state;
    if (from === "Paused" && (to === "memory" || sandbox.pause?.to === "disk"))
      throw new InvalidTransitionError(
        from,
        "Pausing",
        `cannot pause a sandbox that is Paused (in ${sandbox.pause?.to ?? "memory"})`,
      );
    assertTransition(from, "Pausing", "pause");
    const reason = `${options.cause ?? "user"}_pause`;
    const moved = await this.deps.sandboxes.setState(id, from, "Pausing", {
      reason,
      pause: to === "disk" ? { to: "disk", memoryPreserved: false } : (sandbox.pause ?? { to: "memory" }),
    });
    if (!moved) {
      throw new PaddockError(
        Errors.invalidStateTransition,
        `sandbox ${id} changed state during pause; retry`,
      );
    }
    await this.deps.log.record(id, "Pausing", `${reason} to ${to} requested`);
    this.deps.track(this.finishPause(sandbox, to, options.keepMemory ?? sandbox.lifecycle.keepMemory));
    return this.get(id);
  }

  private async finishPause(sandbox: Sandbox, to: "memory" | "disk", keepMemory: boolean): Promise<void> {
    const id = sandbox.id;
    try {
      const depth = await this.deps.runtime.pauseWorkload(id, { to, keepMemory });
      const maxPaused = sandbox.lifecycle.maxPaused;
      await this.deps.sandboxes.setState(id, "Pausing", "Paused", {
        reason: "paused",
        pause: depth,
        ...(sandbox.status.state === "Running" && maxPaused !== null
          ? { pausedUntil: new Date(Date.now() + maxPaused * 1000).toISOString() }
          : {}),
        idleAt: null,
      });
      this.addresses.delete(id);
      await this.deps.log.record(
        id,
        "Paused",
        depth.to === "memory"
          ? "paused in memory"
          : `paused to disk, ${depth.memoryPreserved ? "processes and memory kept" : "filesystem only (its processes start again on resume)"}`,
      );
    } catch (error) {
      // Where the engine left it: still running, still frozen in memory, or gone.
      const message = String((error as Error).message);
      const engine = (await this.deps.runtime.inspectWorkload(id)).state;
      const back: SandboxState = engine === "running" ? "Running" : engine === "paused" ? "Paused" : "Failed";
      await this.deps.sandboxes.setState(id, "Pausing", back, {
        reason: "pause_failed",
        message,
        pause: back === "Paused" ? { to: "memory" } : null,
      });
      await this.deps.log.record(id, back, `pause to ${to} failed: ${message}`);
    }
  }

  /** Moves to Resuming and returns; the sandbox becomes Running in the background. */
  async resume(id: string, owner?: string | null): Promise<Sandbox> {
    const sandbox = await this.get(id, owner);
    assertTransition(sandbox.status.state, "Resuming", "resume");
    const { done } = await this.beginResume(sandbox);
    this.deps.track(done.catch(() => undefined));
    return this.get(id);
  }

  /**
   * Resolves once the sandbox is Running, resuming it if it is paused (or pausing): for calls
   * that need it awake (resume on use, E2B's connect). Concurrent callers share one resume.
   */
  async wake(id: string, owner?: string | null): Promise<Sandbox> {
    const deadline = Date.now() + this.deps.config.runtime.create_timeout_seconds * 1000;
    for (;;) {
      const sandbox = await this.get(id, owner);
      const state = sandbox.status.state;
      if (state === "Running") return sandbox;
      if (state !== "Paused" && state !== "Pausing" && state !== "Resuming") throw cannotServe(sandbox);
      if (Date.now() > deadline)
        throw new PaddockError(Errors.endpointUnavailable, `sandbox ${id} did not wake in time; retry`);
      if (state === "Paused") await (await this.beginResume(sandbox)).done;
      // Being moved, here or by another replica: wait for it to settle.
      else await (this.resuming.get(id) ?? new Promise((resolve) => setTimeout(resolve, 25)));
    }
  }

  /**
   * Paused → Resuming now; `done` is the rest of the move (→ Running, or back to Paused, or
   * Failed when a restore from disk fails), already settled when another call moved it first.
   */
  private async beginResume(sandbox: Sandbox): Promise<{ done: Promise<void> }> {
    const id = sandbox.id;
    const inFlight = this.resuming.get(id);
    if (inFlight) return { done: inFlight };
    await this.resumeAllowed?.(sandbox);
    if (!(await this.deps.sandboxes.setState(id, "Paused", "Resuming", { reason: "resume_requested" })))
      return { done: Promise.resolve() };
    const done = this.finishResume(sandbox).finally(() => this.resuming.delete(id));
    this.resuming.set(id, done);
    return { done };
  }

  private async finishResume(sandbox: Sandbox): Promise<void> {
    const id = sandbox.id;
    const from = sandbox.pause ?? { to: "memory" };
    await this.deps.log.record(id, "Resuming", `resume from ${from.to} requested`);
    try {
      await this.deps.runtime.resumeWorkload(id, { from, execdToken: this.tokens(id).execd });
    } catch (error) {
      const message = String((error as Error).message);
      // Frozen in memory and still there: it stays paused. From disk: Failed, its filesystem kept.
      const engine = from.to === "memory" ? (await this.deps.runtime.inspectWorkload(id)).state : "exited";
      const back: SandboxState = engine === "paused" ? "Paused" : "Failed";
      await this.deps.sandboxes.setState(id, "Resuming", back, { reason: "resume_failed", message });
      await this.deps.log.record(id, back, `resume failed: ${message}`);
      throw new PaddockError(Errors.endpointUnavailable, `sandbox ${id} could not be resumed: ${message}`);
    }
    const { lifecycle } = sandbox;
    const now = Date.now();
    // A sandbox paused at its timeout, or whose expiry passed while it slept (a paused sandbox
    // does not expire, as on E2B), gets the same timeout again, from now.
    const rearm =
      lifecycle.timeout !== null &&
      (sandbox.expiresAt ? Date.parse(sandbox.expiresAt) <= now : lifecycle.onTimeout === "pause");
    this.activity.forget(id);
    await this.deps.sandboxes.setState(id, "Resuming", "Running", {
      reason: "resumed",
      pause: null,
      pausedUntil: null,
      idleAt: idleAtFrom(lifecycle, now) ?? null,
      ...(rearm && lifecycle.timeout !== null
        ? { expiresAt: new Date(now + lifecycle.timeout * 1000).toISOString() }
        : {}),
    });
    await this.deps.log.record(
      id,
      "Running",
      from.to === "disk" && !from.memoryPreserved
        ? "resumed from disk: its processes started again"
        : `resumed from ${from.to}`,
    );
  }

  /**
   * A check every resume passes before it starts (an account that may not run more is refused
   * an automatic resume as it is an explicit one); throws to refuse.
   */
  checkResumes(check: (sandbox: Sandbox) => Promise<void>): void {
    this.resumeAllowed = check;
  }

  async renew(
    id: string,
    expiresAt: Date,
    owner?: string | null,
    options: { allowEarlier?: boolean } = {},
  ): Promise<{ expiresAt: string }> {
    const sandbox = await this.get(id, owner);
    const state = sandbox.status.state;
    if (state === "Stopping" || state === "Terminated" || state === "Failed") {
      throw new PaddockError(Errors.invalidStateTransition, `cannot renew a sandbox that is ${state}`);
    }
    const now = Date.now();
    if (Number.isNaN(expiresAt.getTime())) invalid("expiresAt is not a valid RFC 3339 time");
    if (expiresAt.getTime() <= now) invalid("expiresAt must be in the future");
    if (!options.allowEarlier && sandbox.expiresAt && expiresAt.getTime() <= Date.parse(sandbox.expiresAt)) {
      invalid(`expiresAt must be later than the current expiry ${sandbox.expiresAt}`);
    }
    const max = this.deps.config.server.max_sandbox_timeout_seconds;
    if (expiresAt.getTime() - now > max * 1000) invalid(`expiresAt may be at most ${max} seconds from now`);
    const iso = expiresAt.toISOString();
    await this.deps.sandboxes.setExpiresAt(id, iso);
    await this.deps.log.record(id, state, `expiration renewed to ${iso}`);
    return { expiresAt: iso };
  }

  async patchMetadata(
    id: string,
    patch: Record<string, string | null>,
    owner?: string | null,
  ): Promise<Sandbox> {
    const sandbox = await this.get(id, owner);
    validateMetadata(patch, "body");
    const metadata = { ...sandbox.metadata };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete metadata[key];
      else metadata[key] = value;
    }
    await this.deps.sandboxes.setMetadata(id, metadata);
    return this.get(id);
  }

  async target(id: string, port: number, owner?: string | null): Promise<{ host: string; port: number }> {
    let sandbox = await this.get(id, owner);
    const asleep = ["Paused", "Pausing", "Resuming"].includes(sandbox.status.state);
    if (asleep && sandbox.lifecycle.autoResume) sandbox = await this.wake(id, owner);
    if (sandbox.status.state !== "Running") throw cannotServe(sandbox);
    this.activity.used(sandbox);
    const since = sandbox.status.lastTransitionAt;
    const cached = this.addresses.get(id);
    if (cached?.since === since) return { host: cached.host, port };
    const host = (await this.deps.runtime.inspectWorkload(id)).address;
    if (!host) throw new PaddockError(Errors.endpointUnavailable, `sandbox ${id} has no network address`);
    this.rememberAddress(id, host, since);
    return { host, port };
  }

  async exchangeOpen(id: string): Promise<boolean> {
    const sandbox = await this.deps.sandboxes.find(id);
    if (!sandbox) return false;
    const { state } = sandbox.status;
    // Held past its idle timeout until the next ask or two have had their chance.
    if (state === "Running") this.activity.used(sandbox, 10_000);
    return state !== "Stopping" && state !== "Terminated" && state !== "Failed";
  }

  /**
   * Whether execd still has work in hand: a request in flight, or (with `processesKeepAwake`)
   * something it started still running. A busy sandbox's idle time starts again (decision 0190).
   */
  async busy(sandbox: Sandbox): Promise<boolean> {
    const id = sandbox.id;
    const status = await this.deps.runtime.inspectWorkload(id);
    if (status.state !== "running" || !status.address) return false;
    const activity = await ExecdClient.at(this, id, status.address)
      .activity(AbortSignal.timeout(5000))
      .catch(() => undefined);
    const busy =
      activity !== undefined &&
      (activity.requests > 0 || (sandbox.lifecycle.processesKeepAwake && activity.running > 0));
    if (busy) {
      this.activity.forget(id);
      this.activity.used(sandbox);
    }
    return busy;
  }

  private rememberAddress(id: string, host: string, since: string): void {
    // Sandboxes deleted through other replicas leave entries here: keep the map bounded.
    if (this.addresses.size >= 10_000) this.addresses.delete(this.addresses.keys().next().value as string);
    this.addresses.set(id, { host, since });
  }

  tokens(id: string): { execd: string; egress: string; access: string } {
    const key = this.deps.secretKey;
    return {
      execd: deriveSecret(key, "execd", id),
      egress: deriveSecret(key, "egress", id),
      access: deriveSecret(key, "endpoint-access", id),
    };
  }

  async diagnostics(
    id: string,
    kind: "logs" | "events",
    scope: string,
    owner?: string | null,
  ): Promise<{ text: string; truncated: boolean }> {
    await this.get(id, owner);
    const limit = 8 * 2 ** 20;
    const scopes = kind === "logs" ? ["container", "lifecycle", "all"] : ["lifecycle", "runtime", "all"];
    if (!scopes.includes(scope)) invalid(`scope "${scope}" is not one of ${scopes.join(", ")} for ${kind}`);
    const parts: string[] = [];
    if (kind === "logs" && (scope === "container" || scope === "all")) {
      parts.push(
        await this.deps.runtime
          .workloadLogs(id, limit)
          .catch((error) => `logs unavailable: ${(error as Error).message}\n`),
      );
    }
    if (scope !== "container") parts.push(await this.deps.log.text(id));
    if (kind === "events" && (scope === "runtime" || scope === "all")) {
      const status = await this.deps.runtime.inspectWorkload(id);
      parts.push(
        `${new Date().toISOString()} runtime container ${status.state}${status.error ? ` (${status.error})` : ""}\n`,
      );
    }
    const text = parts.join("");
    return text.length > limit ? { text: text.slice(-limit), truncated: true } : { text, truncated: false };
  }

  watch(owner: string, listener: ChangeListener): () => void {
    return this.deps.changes.watch(owner, listener);
  }

  /** Sets environment variables for every process execd starts in the sandbox from now on. */
  async applyEnv(id: string, env: Record<string, string>): Promise<void> {
    if (Object.keys(env).length === 0) return;
    const execd = await ExecdClient.of(this, id);
    await execd.setEnvironment(env, AbortSignal.timeout(10_000));
  }

  async exitCause(id: string): Promise<PaddockError | undefined> {
    // The engine may take seconds to see the container end after its connections dropped: a
    // gVisor sandbox killed for memory stays "running" to Docker while runsc cleans up.
    const deadline = Date.now() + exitSettleMs;
    while (Date.now() < deadline) {
      const status = await this.deps.runtime.inspectWorkload(id);
      if (status.state === "exited" || status.state === "missing") {
        await this.markExited(id, {
          ...(status.exitCode !== undefined ? { exitCode: status.exitCode } : {}),
          oomKilled: status.oomKilled ?? false,
        });
        break;
      }
      if (status.state === "paused") break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const sandbox = await this.deps.sandboxes.find(id);
    return sandbox ? failureOf(sandbox) : undefined;
  }

  /** A sandbox whose container died on its own (crash, OOM kill) becomes Failed. */
  async markExited(id: string, exit: WorkloadExit): Promise<void> {
    const sandbox = await this.deps.sandboxes.find(id);
    if (!sandbox) return;
    const state = sandbox.status.state;
    if (state !== "Running" && state !== "Paused" && state !== "Pausing" && state !== "Resuming") return;
    // Stopped on purpose: a sandbox going to (or sleeping on) disk, or being started from there.
    if (sandbox.pause?.to === "disk" && !exit.oomKilled) return;
    const reason = exit.oomKilled ? "oom_killed" : exit.vanished ? "container_vanished" : "container_exited";
    const message = exit.oomKilled
      ? "the sandbox exceeded its memory limit and was killed"
      : exit.vanished
        ? "the sandbox's container no longer exists"
        : `the sandbox's main process exited with code ${exit.exitCode ?? "unknown"}`;
    if (await this.deps.sandboxes.setState(id, state, "Failed", { reason, message })) {
      this.addresses.delete(id);
      await this.deps.log.record(id, "Failed", message);
      // Removed behind the server's back: its egress sidecar (restarted by the engine forever in
      // a namespace that is gone) and its network files would outlive it until its delete.
      if (exit.vanished) await this.deps.runtime.removeWorkload(id);
    }
  }
}

/** How long `exitCause` waits for the engine to see a sandbox whose execd went silent end. */
const exitSettleMs = 10_000;

/** Why a sandbox that is not Running cannot serve a call. */
function cannotServe(sandbox: Sandbox): PaddockError {
  const state = sandbox.status.state;
  return (
    failureOf(sandbox) ??
    new PaddockError(
      Errors.invalidStateTransition,
      `sandbox ${sandbox.id} is ${state}; it answers only while Running${state === "Paused" ? " (resume it first, or create it with lifecycle.autoResume)" : ""}`,
    )
  );
}

/** The error that tells a caller why a Failed sandbox cannot serve them; undefined otherwise. */
function failureOf(sandbox: Sandbox): PaddockError | undefined {
  if (sandbox.status.state !== "Failed") return undefined;
  const why = sandbox.status.message ?? sandbox.status.reason ?? "its container ended";
  if (sandbox.status.reason === "oom_killed") {
    return new PaddockError(
      Errors.sandboxOomKilled,
      `sandbox ${sandbox.id} ${why}; delete it and create one with more memory (resourceLimits.memory, or a larger template)`,
    );
  }
  return new PaddockError(Errors.invalidStateTransition, `sandbox ${sandbox.id} is Failed: ${why}`);
}

/** The fields the reconciler restores when it adopts a container the database does not know. */
export function adoptionRecord(sandbox: Sandbox): Partial<Sandbox> {
  return {
    id: sandbox.id,
    owner: sandbox.owner,
    ...(sandbox.image ? { image: sandbox.image } : {}),
    ...(sandbox.snapshotId ? { snapshotId: sandbox.snapshotId } : {}),
    ...(sandbox.template ? { template: sandbox.template } : {}),
    entrypoint: sandbox.entrypoint,
    metadata: sandbox.metadata,
    extensions: sandbox.extensions,
    resourceLimits: sandbox.resourceLimits,
    secureAccess: sandbox.secureAccess,
    createdAt: sandbox.createdAt,
    ...(sandbox.expiresAt ? { expiresAt: sandbox.expiresAt } : {}),
    lifecycle: sandbox.lifecycle,
  };
}

/** A template fills in the image, entrypoint and limits a request leaves out. */
function withTemplateDefaults(input: CreateSandboxInput, template: Template | undefined): CreateSandboxInput {
  if (!template || input.snapshotId) return input;
  return {
    ...input,
    image: input.image ?? { uri: template.image },
    entrypoint: input.entrypoint ?? template.entrypoint,
    resourceLimits: input.resourceLimits ?? template.resourceLimits,
  };
}
