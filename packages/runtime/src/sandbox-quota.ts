import { Errors, PaddockError } from "@paddock/common";
import { formatBytes } from "@paddock/common/format";
import { type Database, type Db, lockWithin } from "@paddock/db";
import type { Transaction } from "kysely";

/** What one owner (an account) may hold at once; its plan decides. */
export interface SandboxQuota {
  /** The plan's name, for the refusal's message. */
  plan: string;
  /** Sandboxes at once: every one not yet deleted (creating, running, paused, failed). */
  maxSandboxes: number;
  /** The sum of those sandboxes' disk quotas and of the owner's volumes' sizes, in bytes; null: no cap. */
  maxDiskBytes: number | null;
  /** Volumes at once; undefined: no cap. */
  maxVolumes?: number;
}

/**
 * Runs `write` (the insert or claim of one sandbox, or the insert of one volume, for `owner`) only
 * if the owner stays within `quota` with it, counting under a lock on the owner: concurrent
 * creates for one account, on any replica, take turns, so none can slip past a count another has
 * not written yet.
 */
export async function withinQuota<T>(
  db: Db,
  owner: string,
  quota: SandboxQuota,
  write: (
    trx: Transaction<Database>,
    assertRoomFor: (diskBytes: number | null) => Promise<void>,
    assertRoomForVolume: (sizeBytes: number) => Promise<void>,
  ) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await lockWithin(trx, `sandboxes:${owner}`);
    return write(
      trx,
      (diskBytes) => assertRoom(trx, owner, quota, diskBytes),
      (sizeBytes) => assertVolumeRoom(trx, owner, quota, sizeBytes),
    );
  });
}

/** Disk the owner holds: its sandboxes' quotas and its volumes' sizes. */
async function heldDisk(trx: Transaction<Database>, owner: string): Promise<number> {
  const volumes = await trx
    .selectFrom("volumes")
    .select((eb) => eb.fn.sum<number | string | null>("size_bytes").as("disk"))
    .where("owner", "=", owner)
    .executeTakeFirst();
  return Number(volumes?.disk ?? 0);
}

async function assertVolumeRoom(
  trx: Transaction<Database>,
  owner: string,
  quota: SandboxQuota,
  sizeBytes: number,
): Promise<void> {
  const held = await trx
    .selectFrom("volumes")
    .select((eb) => eb.fn.countAll<number | string>().as("count"))
    .where("owner", "=", owner)
    .executeTakeFirst();
  const count = Number(held?.count ?? 0);
  if (quota.maxVolumes !== undefined && count + 1 > quota.maxVolumes) {
    throw new PaddockError(
      Errors.quotaExceeded,
      `volume limit: the ${quota.plan} plan allows ${quota.maxVolumes} volumes and this account has ${count}; delete one it no longer needs, or move to a larger plan`,
    );
  }
  const sandboxes = await trx
    .selectFrom("sandboxes")
    .select((eb) => eb.fn.sum<number | string | null>("disk_bytes").as("disk"))
    .where("owner", "=", owner)
    .executeTakeFirst();
  const disk = Number(sandboxes?.disk ?? 0) + (await heldDisk(trx, owner));
  if (quota.maxDiskBytes !== null && disk + sizeBytes > quota.maxDiskBytes) {
    throw new PaddockError(
      Errors.quotaExceeded,
      `disk limit: the ${quota.plan} plan allows ${formatBytes(quota.maxDiskBytes)} of disk across an account's sandboxes and volumes; this account's take ${formatBytes(disk)} and this volume would add ${formatBytes(sizeBytes)}; delete a sandbox or volume first, or move to a larger plan`,
    );
  }
}

async function assertRoom(
  trx: Transaction<Database>,
  owner: string,
  quota: SandboxQuota,
  diskBytes: number | null,
): Promise<void> {
  const held = await trx
    .selectFrom("sandboxes")
    .select((eb) => [
      eb.fn.countAll<number | string>().as("count"),
      eb.fn.sum<number | string | null>("disk_bytes").as("disk"),
    ])
    .where("owner", "=", owner)
    .executeTakeFirst();
  const count = Number(held?.count ?? 0);
  const disk = Number(held?.disk ?? 0) + (await heldDisk(trx, owner));
  if (count + 1 > quota.maxSandboxes) {
    throw new PaddockError(
      Errors.quotaExceeded,
      `sandbox limit: the ${quota.plan} plan allows ${quota.maxSandboxes} sandboxes at once (creating, running, paused or failed) and this account has ${count}; delete one it no longer needs, or move to a larger plan`,
    );
  }
  if (quota.maxDiskBytes !== null && disk + (diskBytes ?? 0) > quota.maxDiskBytes) {
    throw new PaddockError(
      Errors.quotaExceeded,
      `disk limit: the ${quota.plan} plan allows ${formatBytes(quota.maxDiskBytes)} of disk across an account's sandboxes and volumes; this account's take ${formatBytes(disk)} and this sandbox would add ${formatBytes(diskBytes ?? 0)}; delete a sandbox or volume first, or move to a larger plan`,
    );
  }
}
