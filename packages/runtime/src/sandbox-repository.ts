import type { Database, Db, SandboxesTable } from "@paddock/db";
import type { Transaction } from "kysely";
import { idleAtFrom } from "./lifecycle.js";
import {
  defaultLifecycle,
  type PauseDepth,
  type Sandbox,
  type SandboxFilter,
  type SandboxLifecycle,
} from "./model.js";
import type { SandboxWrite } from "./sandbox-changes.js";
import { type SandboxQuota, withinQuota } from "./sandbox-quota.js";
import { assertTransition, type SandboxState } from "./state-machine.js";
import { attachVolumes, type VolumeAttachment } from "./volume-repository.js";

/** Told of every state a sandbox row takes, after the write (a removed row: Terminated). */
export type StateObserver = (sandboxId: string, state: SandboxState) => Promise<void>;

/** Told of every write to a sandbox row (state, metadata, expiry, a claim, its removal), after it. */
export type WriteObserver = (write: SandboxWrite) => Promise<void>;

/**
 * Persistence of sandboxes: rows in, `Sandbox` models out. Every insert and state change records
 * `replica`, the server that wrote it, so the reconciler can tell a live replica's move in
 * progress from a dead one's.
 */
export class SandboxRepository {
  constructor(
    private readonly db: Db,
    private readonly observe: StateObserver = async () => undefined,
    private readonly replica: string | null = null,
    private readonly written: WriteObserver = async () => undefined,
  ) {}

  /**
   * Writes a new sandbox. `diskBytes` is its disk quota; with `quota`, the insert happens only if
   * its owner stays within it (else `quota_exceeded`, nothing written). `volumes` are the
   * volumes it mounts, recorded with it so that none can be deleted while it exists.
   */
  async insert(
    sandbox: Sandbox,
    options: {
      diskBytes?: number | null;
      quota?: SandboxQuota | undefined;
      volumes?: VolumeAttachment[];
    } = {},
  ): Promise<void> {
    const row = { ...toRow(sandbox), replica: this.replica, disk_bytes: options.diskBytes ?? null };
    const volumes = options.volumes ?? [];
    if (options.quota && sandbox.owner !== null) {
      await withinQuota(this.db, sandbox.owner, options.quota, async (trx, assertRoomFor) => {
        await assertRoomFor(row.disk_bytes);
        await trx.insertInto("sandboxes").values(row).execute();
        await attachVolumes(trx, sandbox.id, volumes);
      });
    } else if (volumes.length > 0) {
      await this.db.transaction().execute(async (trx) => {
        await trx.insertInto("sandboxes").values(row).execute();
        await attachVolumes(trx, sandbox.id, volumes);
      });
    } else {
      await this.db.insertInto("sandboxes").values(row).execute();
    }
    await this.observe(sandbox.id, sandbox.status.state);
    await this.written({ id: sandbox.id, owner: sandbox.owner });
  }

  async find(id: string): Promise<Sandbox | undefined> {
    const row = await this.db.selectFrom("sandboxes").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  /** All sandboxes matching owner, states and template, newest first; warm-pool members are not listed. */
  async findAll(
    filter: Pick<SandboxFilter, "owner" | "states" | "template"> & { includePooled?: boolean },
  ): Promise<Sandbox[]> {
    let query = this.db.selectFrom("sandboxes").selectAll().orderBy("created_at", "desc").orderBy("id");
    if (!filter.includePooled) query = query.where("pooled_for", "is", null);
    if (filter.owner !== undefined) {
      query =
        filter.owner === null ? query.where("owner", "is", null) : query.where("owner", "=", filter.owner);
    }
    if (filter.states && filter.states.length > 0) query = query.where("state", "in", filter.states);
    if (filter.template !== undefined) query = query.where("template", "=", filter.template);
    return (await query.execute()).map(fromRow);
  }

  /** The replica that last moved each sandbox (null: written before replicas were recorded). */
  async movers(): Promise<Map<string, string | null>> {
    const rows = await this.db.selectFrom("sandboxes").select(["id", "replica"]).execute();
    return new Map(rows.map((row) => [row.id, row.replica ?? null]));
  }

  async expiredBefore(now: string): Promise<Sandbox[]> {
    const rows = await this.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("expires_at", "is not", null)
      .where("expires_at", "<=", now)
      // A create still in flight is left alone until it settles; a paused sandbox's timeout
      // does not run (its `maxPaused` bounds it, and a resume re-arms a spent expiry).
      .where("state", "in", ["Running", "Failed"])
      .execute();
    return rows.map(fromRow);
  }

  /**
   * Moves a sandbox to a new state only if it is still in `from` (compare-and-set), so two
   * concurrent operations cannot both win. Returns false when the state had changed. A move the
   * state machine does not allow from every `from` throws `InvalidTransitionError` unwritten.
   */
  async setState(
    id: string,
    from: SandboxState | SandboxState[],
    to: SandboxState,
    details: StateDetails = {},
  ): Promise<boolean> {
    const sources = Array.isArray(from) ? from : [from];
    for (const source of sources) assertTransition(source, to, `move to ${to}`);
    const now = new Date().toISOString();
    const moved = await this.db
      .updateTable("sandboxes")
      .set({
        state: to,
        reason: details.reason ?? null,
        message: details.message ?? null,
        last_transition_at: now,
        updated_at: now,
        replica: this.replica,
        ...(details.containerId ? { container_id: details.containerId } : {}),
        ...(details.pause !== undefined ? pauseColumns(details.pause) : {}),
        ...(details.pausedUntil !== undefined ? { paused_until: details.pausedUntil } : {}),
        ...(details.expiresAt !== undefined ? { expires_at: details.expiresAt } : {}),
        ...(details.idleAt !== undefined ? { idle_at: details.idleAt } : {}),
      })
      .where("id", "=", id)
      .where("state", "in", sources)
      .returning("owner")
      .executeTakeFirst();
    if (!moved) return false;
    await this.observe(id, to);
    await this.written({ id, owner: moved.owner });
    return true;
  }

  async setMetadata(id: string, metadata: Record<string, string>): Promise<void> {
    const row = await this.db
      .updateTable("sandboxes")
      .set({ metadata: JSON.stringify(metadata), updated_at: new Date().toISOString() })
      .where("id", "=", id)
      .returning("owner")
      .executeTakeFirst();
    if (row) await this.written({ id, owner: row.owner });
  }

  async setExpiresAt(id: string, expiresAt: string | null): Promise<void> {
    const row = await this.db
      .updateTable("sandboxes")
      .set({ expires_at: expiresAt, updated_at: new Date().toISOString() })
      .where("id", "=", id)
      .returning("owner")
      .executeTakeFirst();
    if (row) await this.written({ id, owner: row.owner });
  }

  /**
   * Records a use: when it happened and when the sandbox idles out unless used again. Not a
   * change watchers are told of (it would be one per call).
   */
  async touch(id: string, at: string, idleAt: string | null): Promise<void> {
    await this.db
      .updateTable("sandboxes")
      .set({ last_activity_at: at, idle_at: idleAt })
      .where("id", "=", id)
      .execute();
  }

  /** Running sandboxes whose `idle_at` has passed (warm-pool members never idle out). */
  async idleBefore(now: string): Promise<Sandbox[]> {
    const rows = await this.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("state", "=", "Running")
      .where("pooled_for", "is", null)
      .where("idle_at", "is not", null)
      .where("idle_at", "<=", now)
      .execute();
    return rows.map(fromRow);
  }

  /** Sandboxes paused in memory since before `since`: the ones to move to disk. */
  async pausedInMemorySince(since: string): Promise<Sandbox[]> {
    const rows = await this.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("state", "=", "Paused")
      .where("paused_to", "=", "memory")
      .where("last_transition_at", "<=", since)
      .execute();
    return rows.map(fromRow);
  }

  /** Paused sandboxes past their `maxPaused`. */
  async pausedPastRetention(now: string): Promise<Sandbox[]> {
    const rows = await this.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("state", "=", "Paused")
      .where("paused_until", "is not", null)
      .where("paused_until", "<=", now)
      .execute();
    return rows.map(fromRow);
  }

  /** Warm sandboxes of a template that are ready to be claimed (or, `Pending`, being created). */
  async countPooled(template: string, state: "Running" | "Pending" = "Running"): Promise<number> {
    const row = await this.db
      .selectFrom("sandboxes")
      .select((eb) => eb.fn.countAll<string | number>().as("count"))
      .where("pooled_for", "=", template)
      .where("state", "=", state)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  /**
   * Takes one Running sandbox out of a template's warm pool and gives it to its new owner, with
   * its creation and expiry counted from now. Compare-and-set on `pooled_for`, so two concurrent
   * claims never get the same sandbox. With `quota`, only if the owner stays within it.
   */
  async claimPooled(template: string, claim: PoolClaim, quota?: SandboxQuota): Promise<string | undefined> {
    const owner = claim.owner;
    const id =
      quota && owner !== null
        ? await withinQuota(this.db, owner, quota, (trx, assertRoomFor) =>
            this.takePooled(trx, template, claim, assertRoomFor),
          )
        : await this.takePooled(this.db, template, claim, async () => undefined);
    if (id) {
      // Running for its new owner from now on.
      await this.observe(id, "Running");
      await this.written({ id, owner });
    }
    return id;
  }

  private async takePooled(
    db: Db | Transaction<Database>,
    template: string,
    claim: PoolClaim,
    assertRoomFor: (diskBytes: number | null) => Promise<void>,
  ): Promise<string | undefined> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const candidate = await db
        .selectFrom("sandboxes")
        .select(["id", "disk_bytes"])
        .where("pooled_for", "=", template)
        .where("state", "=", "Running")
        .orderBy("created_at")
        .limit(1)
        .executeTakeFirst();
      if (!candidate) return undefined;
      await assertRoomFor(candidate.disk_bytes == null ? null : Number(candidate.disk_bytes));
      const now = new Date().toISOString();
      const result = await db
        .updateTable("sandboxes")
        .set({
          pooled_for: null,
          owner: claim.owner,
          metadata: JSON.stringify(claim.metadata),
          expires_at: claim.expiresAt,
          // The caller's policy, not the one the warm sandbox was made with (decision 0190).
          ...(claim.extensions ? { extensions: JSON.stringify(claim.extensions) } : {}),
          ...(claim.lifecycle
            ? {
                lifecycle: JSON.stringify(claim.lifecycle),
                idle_at: idleAtFrom(claim.lifecycle, Date.parse(now)) ?? null,
                last_activity_at: now,
              }
            : {}),
          created_at: now,
          updated_at: now,
          reason: "created",
          last_transition_at: now,
        })
        .where("id", "=", candidate.id)
        .where("pooled_for", "=", template)
        .where("state", "=", "Running")
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) return candidate.id;
    }
    return undefined;
  }

  async remove(id: string): Promise<void> {
    const row = await this.db
      .deleteFrom("sandboxes")
      .where("id", "=", id)
      .returning("owner")
      .executeTakeFirst();
    await this.observe(id, "Terminated");
    if (row) await this.written({ id, owner: row.owner, removed: true });
  }
}

/** What a state change may write besides the state. `null` clears a field; absent leaves it. */
/** What a claim gives a warm sandbox's new owner. */
export interface PoolClaim {
  owner: string | null;
  metadata: Record<string, string>;
  expiresAt: string | null;
  extensions?: Record<string, string>;
  lifecycle?: SandboxLifecycle;
}

export interface StateDetails {
  reason?: string;
  message?: string;
  containerId?: string;
  pause?: PauseDepth | null;
  pausedUntil?: string | null;
  expiresAt?: string | null;
  idleAt?: string | null;
}

function pauseColumns(pause: PauseDepth | null): Pick<SandboxesTable, "paused_to" | "memory_preserved"> {
  if (!pause) return { paused_to: null, memory_preserved: null };
  return {
    paused_to: pause.to,
    memory_preserved: pause.to === "disk" ? (pause.memoryPreserved ? 1 : 0) : null,
  };
}

function pauseOf(row: SandboxesTable): PauseDepth | undefined {
  if (row.paused_to === "memory") return { to: "memory" };
  if (row.paused_to === "disk") return { to: "disk", memoryPreserved: row.memory_preserved === 1 };
  return undefined;
}

function toRow(sandbox: Sandbox): SandboxesTable {
  return {
    id: sandbox.id,
    owner: sandbox.owner,
    state: sandbox.status.state,
    reason: sandbox.status.reason ?? null,
    message: sandbox.status.message ?? null,
    last_transition_at: sandbox.status.lastTransitionAt,
    image_uri: sandbox.image?.uri ?? null,
    snapshot_id: sandbox.snapshotId ?? null,
    template: sandbox.template ?? null,
    entrypoint: JSON.stringify(sandbox.entrypoint),
    metadata: JSON.stringify(sandbox.metadata),
    extensions: JSON.stringify(sandbox.extensions),
    resource_limits: JSON.stringify(sandbox.resourceLimits),
    platform: sandbox.platform ? JSON.stringify(sandbox.platform) : null,
    network_policy: sandbox.networkPolicy ? JSON.stringify(sandbox.networkPolicy) : null,
    secure_access: sandbox.secureAccess ? 1 : 0,
    container_id: sandbox.containerId ?? null,
    created_at: sandbox.createdAt,
    updated_at: sandbox.updatedAt,
    expires_at: sandbox.expiresAt ?? null,
    pooled_for: sandbox.pooledFor ?? null,
    lifecycle: JSON.stringify(sandbox.lifecycle),
    idle_at: sandbox.idleAt ?? null,
    last_activity_at: sandbox.lastActivityAt ?? null,
    ...pauseColumns(sandbox.pause ?? null),
    paused_until: sandbox.pausedUntil ?? null,
  };
}

function fromRow(row: SandboxesTable): Sandbox {
  return {
    id: row.id,
    owner: row.owner,
    status: {
      state: row.state as SandboxState,
      ...(row.reason ? { reason: row.reason } : {}),
      ...(row.message ? { message: row.message } : {}),
      lastTransitionAt: row.last_transition_at,
    },
    ...(row.image_uri ? { image: { uri: row.image_uri } } : {}),
    ...(row.snapshot_id ? { snapshotId: row.snapshot_id } : {}),
    ...(row.template ? { template: row.template } : {}),
    entrypoint: JSON.parse(row.entrypoint) as string[],
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    extensions: JSON.parse(row.extensions) as Record<string, string>,
    resourceLimits: JSON.parse(row.resource_limits) as Record<string, string>,
    ...(row.platform ? { platform: JSON.parse(row.platform) } : {}),
    ...(row.network_policy ? { networkPolicy: JSON.parse(row.network_policy) } : {}),
    secureAccess: row.secure_access === 1,
    ...(row.container_id ? { containerId: row.container_id } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.expires_at ? { expiresAt: row.expires_at } : {}),
    ...(row.pooled_for ? { pooledFor: row.pooled_for } : {}),
    // Rows written before lifecycles were stored have the defaults.
    lifecycle: { ...defaultLifecycle, ...(row.lifecycle ? (JSON.parse(row.lifecycle) as object) : {}) },
    ...(row.last_activity_at ? { lastActivityAt: row.last_activity_at } : {}),
    ...(row.idle_at ? { idleAt: row.idle_at } : {}),
    ...(pauseOf(row) ? { pause: pauseOf(row) } : {}),
    ...(row.paused_until ? { pausedUntil: row.paused_until } : {}),
  };
}
