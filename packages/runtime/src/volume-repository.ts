import { Errors, PaddockError } from "@paddock/common";
import { type Database, type Db, lockWithin, type VolumesTable } from "@paddock/db";
import type { Transaction } from "kysely";
import type { Volume, VolumeMount } from "./model.js";
import { type SandboxQuota, withinQuota } from "./sandbox-quota.js";

/** The key names are unique under: the owner, or "" for the operator's (owner null). */
function ownerKey(owner: string | null): string {
  return owner ?? "";
}

/**
 * Persistence of volumes and of which sandboxes mount them. A volume row is only written or
 * removed under a lock on its owner's names, and a volume is only mounted or deleted under a lock
 * on the volume itself, so a delete can never slip between a create's check and its mount.
 */
export class VolumeRepository {
  constructor(private readonly db: Db) {}

  /**
   * Writes a new volume unless its owner has one of that name (`volume_exists`) or, with `quota`,
   * it would take the owner past its volume count or disk (`quota_exceeded`).
   */
  async insert(volume: Volume, quota?: SandboxQuota): Promise<void> {
    const write = async (trx: Transaction<Database>, assertRoom?: () => Promise<void>) => {
      await lockWithin(trx, `volumes:${ownerKey(volume.owner)}`);
      const existing = await trx
        .selectFrom("volumes")
        .select("id")
        .where("owner_key", "=", ownerKey(volume.owner))
        .where("name", "=", volume.name)
        .executeTakeFirst();
      if (existing)
        throw new PaddockError(Errors.volumeExists, `a volume named ${volume.name} exists already`);
      await assertRoom?.();
      await trx.insertInto("volumes").values(toRow(volume)).execute();
    };
    if (quota && volume.owner !== null) {
      await withinQuota(this.db, volume.owner, quota, (trx, _sandboxRoom, volumeRoom) =>
        write(trx, () => volumeRoom(volume.sizeBytes)),
      );
    } else {
      await this.db.transaction().execute((trx) => write(trx));
    }
  }

  async find(id: string): Promise<Volume | undefined> {
    const row = await this.db.selectFrom("volumes").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async findByName(owner: string | null, name: string): Promise<Volume | undefined> {
    const row = await this.db
      .selectFrom("volumes")
      .selectAll()
      .where("owner_key", "=", ownerKey(owner))
      .where("name", "=", name)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  /** The owner's volumes, oldest first; undefined: every owner's. */
  async findAll(owner?: string | null): Promise<Volume[]> {
    let query = this.db.selectFrom("volumes").selectAll().orderBy("created_at").orderBy("id");
    if (owner !== undefined) query = query.where("owner_key", "=", ownerKey(owner));
    return (await query.execute()).map(fromRow);
  }

  /**
   * Removes the volume's row unless a sandbox that exists mounts it: then `volume_in_use`, naming
   * them. Returns false when there was no such row.
   */
  /**
   * Forgets which volumes a sandbox whose row is gone mounted; returns those that were to go with
   * it. Nothing while the row exists.
   */
  async detach(sandboxId: string): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const sandbox = await trx
        .selectFrom("sandboxes")
        .select("id")
        .where("id", "=", sandboxId)
        .executeTakeFirst();
      if (sandbox) return [];
      const rows = await trx
        .deleteFrom("sandbox_volumes")
        .where("sandbox_id", "=", sandboxId)
        .returning(["volume_id", "delete_with_sandbox"])
        .execute();
      const doomed = rows.filter((row) => Number(row.delete_with_sandbox) === 1).map((row) => row.volume_id);
      return [...new Set(doomed)];
    });
  }

  /** The volumes each of the sandboxes mounts, by mount path, keyed by sandbox (one query). */
  async mountsOf(sandboxIds: string[]): Promise<Map<string, VolumeMount[]>> {
    const mounts = new Map(sandboxIds.map((id) => [id, [] as VolumeMount[]]));
    if (sandboxIds.length === 0) return mounts;
    const rows = await this.db
      .selectFrom("sandbox_volumes")
      .innerJoin("volumes", "volumes.id", "sandbox_volumes.volume_id")
      .select([
        "sandbox_volumes.sandbox_id",
        "volumes.id",
        "volumes.name",
        "sandbox_volumes.mount_path",
        "sandbox_volumes.read_only",
      ])
      .where("sandbox_volumes.sandbox_id", "in", sandboxIds)
      .orderBy("sandbox_volumes.mount_path")
      .execute();
    for (const row of rows) {
      mounts.get(row.sandbox_id)?.push({
        volumeId: row.id,
        name: row.name,
        mountPath: row.mount_path,
        readOnly: Number(row.read_only) === 1,
      });
    }
    return mounts;
  }

  async remove(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockWithin(trx, `volume:${id}`);
      const users = await trx
        .selectFrom("sandbox_volumes")
        .innerJoin("sandboxes", "sandboxes.id", "sandbox_volumes.sandbox_id")
        .select("sandboxes.id")
        .where("sandbox_volumes.volume_id", "=", id)
        .orderBy("sandboxes.id")
        .execute();
      if (users.length > 0) {
        throw new PaddockError(
          Errors.volumeInUse,
          `volume ${id} is mounted by ${users.map((user) => user.id).join(", ")}; delete ${users.length === 1 ? "that sandbox" : "those sandboxes"} first`,
        );
      }
      await trx.deleteFrom("sandbox_volumes").where("volume_id", "=", id).execute();
      const removed = await trx.deleteFrom("volumes").where("id", "=", id).executeTakeFirst();
      return Number(removed.numDeletedRows) > 0;
    });
  }
}

/**
 * Records, within the transaction inserting the sandbox, that it mounts these volumes; each must
 * still exist (a delete of one takes the same lock), else `volume_not_found`.
 */
export async function attachVolumes(
  trx: Transaction<Database>,
  sandboxId: string,
  volumes: VolumeAttachment[],
): Promise<void> {
  for (const volumeId of [...new Set(volumes.map((volume) => volume.volumeId))].sort()) {
    await lockWithin(trx, `volume:${volumeId}`);
    const found = await trx.selectFrom("volumes").select("id").where("id", "=", volumeId).executeTakeFirst();
    if (!found) throw new PaddockError(Errors.volumeNotFound, `volume ${volumeId} was deleted`);
  }
  if (volumes.length === 0) return;
  await trx
    .insertInto("sandbox_volumes")
    .values(
      volumes.map((volume) => ({
        sandbox_id: sandboxId,
        volume_id: volume.volumeId,
        mount_path: volume.mountPath,
        read_only: volume.readOnly ? 1 : 0,
        delete_with_sandbox: volume.deleteWithSandbox ? 1 : 0,
      })),
    )
    .execute();
}

/** A volume a new sandbox mounts. */
export interface VolumeAttachment {
  volumeId: string;
  mountPath: string;
  readOnly?: boolean;
  /** The volume goes when the sandbox does (made by its create, with deleteOnSandboxTermination). */
  deleteWithSandbox?: boolean;
}

function toRow(volume: Volume): VolumesTable {
  return {
    id: volume.id,
    owner: volume.owner,
    owner_key: ownerKey(volume.owner),
    name: volume.name,
    size_bytes: volume.sizeBytes,
    created_at: volume.createdAt,
  };
}

function fromRow(row: VolumesTable): Volume {
  return {
    id: row.id,
    owner: row.owner,
    name: row.name,
    sizeBytes: Number(row.size_bytes),
    createdAt: row.created_at,
  };
}
