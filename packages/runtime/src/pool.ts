import type { Logger, PaddockConfig } from "@paddock/common";
import type { Lease } from "@paddock/db";
import type { CreateSandboxInput, Sandbox, SandboxLifecycle } from "./model.js";
import type { SandboxRepository } from "./sandbox-repository.js";
import type { SandboxService } from "./sandbox-service.js";
import type { TemplateCatalog } from "./templates/catalog.js";
import type { Template } from "./templates/manifests.js";

export interface WarmPoolsDeps {
  service: SandboxService;
  repository: SandboxRepository;
  /** Pools serve built-in templates and published ones (decision 0198), named in `config.sizes`. */
  templates: TemplateCatalog;
  config: PaddockConfig["pools"];
  logger: Logger;
  /** Among replicas, the holder refills: one writer keeps a shared pool from overfilling. */
  lease: Lease;
}

/**
 * Warm pools: per template, a few pre-created sandboxes that are already Running with execd
 * answering. A create for that template claims one (owner, metadata, env and expiry applied at
 * claim time) and the pool refills in the background, never more than `refill_concurrency`
 * creations at once so refills cannot starve callers' own creates. Any replica claims; only the
 * holder of the pools lease refills, counting creates in flight anywhere (Pending members).
 */
export class WarmPools {
  private readonly inFlight = new Map<string, number>();
  private readonly work = new Set<Promise<unknown>>();
  private readonly queued = new Set<string>();
  private looking: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: WarmPoolsDeps) {}

  start(): void {
    this.refillAll();
    // Catch up after failures (an image built late, a failed create).
    this.timer = setInterval(() => this.refillAll(), 2000);
    this.timer.unref();
  }

  /** Stops refilling, waits for creations in flight; `drain` also removes the warm sandboxes. */
  async stop(options: { drain?: boolean } = {}): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.work]);
    if (!options.drain) return;
    for (const template of Object.keys(this.deps.config.sizes)) {
      for (const sandbox of await this.members(template)) {
        await this.deps.service.delete(sandbox.id, undefined, "pool_drained").catch(() => undefined);
      }
    }
  }

  /**
   * A warm sandbox for this create, with the lifecycle the service resolved from it, or undefined
   * when the request cannot be served from a pool.
   */
  async claim(
    input: CreateSandboxInput,
    lifecycle: SandboxLifecycle,
    template: Template | undefined,
  ): Promise<Sandbox | undefined> {
    // An account's own template has no pool; a published one may.
    if (!template || (template.account && !template.account.published)) return undefined;
    if (!this.sizeOf(template.id) || !poolable(input, template)) return undefined;
    const expiresAt = input.timeout ? new Date(Date.now() + input.timeout * 1000).toISOString() : null;
    const id = await this.deps.repository.claimPooled(
      template.id,
      {
        owner: input.owner ?? null,
        metadata: input.metadata ?? {},
        expiresAt,
        extensions: input.extensions ?? {},
        lifecycle,
      },
      input.quota,
    );
    this.refill(template.id);
    if (!id) return undefined;
    try {
      await this.deps.service.applyEnv(id, input.env ?? {});
    } catch (error) {
      // A warm sandbox that cannot take its environment is no good to anyone.
      this.deps.logger.warn({ sandboxId: id, err: error }, "claimed sandbox refused its environment");
      await this.deps.service.delete(id, undefined, "pool_claim_failed").catch(() => undefined);
      return undefined;
    }
    return this.deps.service.get(id);
  }

  async readyCount(template: string): Promise<number> {
    return this.deps.repository.countPooled(template);
  }

  private sizeOf(template: string): number {
    return this.deps.config.sizes[template] ?? 0;
  }

  private async members(template: string): Promise<Sandbox[]> {
    const all = await this.deps.repository.findAll({ includePooled: true });
    return all.filter((sandbox) => sandbox.pooledFor === template);
  }

  private refillAll(): void {
    for (const template of Object.keys(this.deps.config.sizes)) this.refill(template);
  }

  private totalInFlight(): number {
    let total = 0;
    for (const count of this.inFlight.values()) total += count;
    return total;
  }

  /**
   * Looks at one template's deficit and starts creates to cover it. Looks run one at a time (a
   * claim and the timer asking together would otherwise both see the same deficit), and a look
   * already queued for a template covers later asks.
   */
  private refill(templateId: string): void {
    if (this.stopped || !this.deps.lease.held() || this.queued.has(templateId)) return;
    this.queued.add(templateId);
    this.looking = this.looking.then(async () => {
      this.queued.delete(templateId);
      if (this.stopped || !this.deps.lease.held()) return;
      const template = await this.deps.templates.find(templateId, null);
      if (!template) return;
      // A published template built again: its members of the build before give way to the new one.
      if (template.account) await this.dropOutdated(template);
      const ready = await this.deps.repository.countPooled(templateId);
      // Creates of this replica not yet written, or of any replica (one that lost the lease
      // while creating, or died: its members count until the reconciler removes them).
      const creating = Math.max(
        this.inFlight.get(templateId) ?? 0,
        await this.deps.repository.countPooled(templateId, "Pending"),
      );
      const deficit = this.sizeOf(templateId) - ready - creating;
      const room = Math.min(
        this.deps.config.refill_concurrency - this.totalInFlight(),
        this.deps.config.max_total - (await this.totalPooled()) - this.totalInFlight(),
      );
      for (let i = 0; i < Math.min(deficit, room); i++) this.createOne(template);
    });
    this.looking = this.looking.catch((error) =>
      this.deps.logger.warn({ template: templateId, err: error }, "pool refill failed"),
    );
    this.track(this.looking);
  }

  private createOne(template: Template): void {
    this.inFlight.set(template.id, (this.inFlight.get(template.id) ?? 0) + 1);
    const task = this.deps.service
      .create({
        image: { uri: template.image },
        entrypoint: template.entrypoint,
        resourceLimits: template.resourceLimits,
        template: template.id,
        pooledFor: template.id,
      })
      .catch((error) =>
        this.deps.logger.warn({ template: template.id, err: error }, "warm sandbox creation failed"),
      )
      .finally(() => {
        this.inFlight.set(template.id, (this.inFlight.get(template.id) ?? 1) - 1);
        this.refill(template.id);
      });
    this.track(task);
  }

  private async dropOutdated(template: Template): Promise<void> {
    for (const sandbox of await this.members(template.id)) {
      if (sandbox.image?.uri !== template.image && sandbox.status.state === "Running")
        await this.deps.service.delete(sandbox.id, undefined, "pool_outdated").catch(() => undefined);
    }
  }

  private async totalPooled(): Promise<number> {
    let total = 0;
    for (const template of Object.keys(this.deps.config.sizes))
      total += await this.deps.repository.countPooled(template);
    return total;
  }

  private track(work: Promise<unknown>): void {
    this.work.add(work);
    void work.finally(() => this.work.delete(work));
  }
}

/** A request a warm sandbox can serve (template defaults already applied): the template's own image,
 *  entrypoint and limits, and nothing a warm sandbox was not created with. */
function poolable(input: CreateSandboxInput, template: Template): boolean {
  if (input.image?.uri !== template.image || input.image.auth) return false;
  if (JSON.stringify(input.entrypoint) !== JSON.stringify(template.entrypoint)) return false;
  if (JSON.stringify(input.resourceLimits) !== JSON.stringify(template.resourceLimits)) return false;
  return !(
    input.pooledFor ||
    input.snapshotId ||
    input.networkPolicy ||
    input.volumes?.length ||
    input.platform ||
    input.secureAccess
  );
}
