import type { Db, SnapshotsTable } from "@paddock/db";
import type { Snapshot, SnapshotFilter } from "./model.js";
import type { SnapshotState } from "./state-machine.js";

/** Persistence of snapshots; like sandboxes, each write records the replica that made it. */
export class SnapshotRepository {
  constructor(
    private readonly db: Db,
    private readonly replica: string | null = null,
  ) {}

  async insert(snapshot: Snapshot): Promise<void> {
    await this.db
      .insertInto("snapshots")
      .values({ ...toRow(snapshot), replica: this.replica })
      .execute();
  }

  /** The replica that last moved each snapshot (null: written before replicas were recorded). */
  async movers(): Promise<Map<string, string | null>> {
    const rows = await this.db.selectFrom("snapshots").select(["id", "replica"]).execute();
    return new Map(rows.map((row) => [row.id, row.replica ?? null]));
  }

  async find(id: string): Promise<Snapshot | undefined> {
    const row = await this.db.selectFrom("snapshots").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async findAll(filter: SnapshotFilter): Promise<Snapshot[]> {
    let query = this.db.selectFrom("snapshots").selectAll().orderBy("created_at", "desc").orderBy("id");
    if (filter.owner !== undefined) {
      query =
        filter.owner === null ? query.where("owner", "is", null) : query.where("owner", "=", filter.owner);
    }
    if (filter.sandboxId) query = query.where("sandbox_id", "=", filter.sandboxId);
    if (filter.name) query = query.where("name", "=", filter.name);
    if (filter.states && filter.states.length > 0) query = query.where("state", "in", filter.states);
    return (await query.execute()).map(fromRow);
  }

  async setState(
    id: string,
    from: SnapshotState[],
    to: SnapshotState,
    details: { reason?: string; message?: string; imageRef?: string } = {},
  ): Promise<boolean> {
    const result = await this.db
      .updateTable("snapshots")
      .set({
        state: to,
        reason: details.reason ?? null,
        message: details.message ?? null,
        last_transition_at: new Date().toISOString(),
        replica: this.replica,
        ...(details.imageRef ? { image_ref: details.imageRef } : {}),
      })
      .where("id", "=", id)
      .where("state", "in", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom("snapshots").where("id", "=", id).execute();
  }
}

function toRow(snapshot: Snapshot): SnapshotsTable {
  return {
    id: snapshot.id,
    owner: snapshot.owner,
    sandbox_id: snapshot.sandboxId,
    name: snapshot.name ?? null,
    state: snapshot.status.state,
    reason: snapshot.status.reason ?? null,
    message: snapshot.status.message ?? null,
    last_transition_at: snapshot.status.lastTransitionAt,
    image_ref: snapshot.imageRef ?? null,
    entrypoint: JSON.stringify(snapshot.entrypoint),
    created_at: snapshot.createdAt,
  };
}

function fromRow(row: SnapshotsTable): Snapshot {
  return {
    id: row.id,
    owner: row.owner,
    sandboxId: row.sandbox_id,
    ...(row.name ? { name: row.name } : {}),
    status: {
      state: row.state as SnapshotState,
      ...(row.reason ? { reason: row.reason } : {}),
      ...(row.message ? { message: row.message } : {}),
      lastTransitionAt: row.last_transition_at,
    },
    ...(row.image_ref ? { imageRef: row.image_ref } : {}),
    entrypoint: JSON.parse(row.entrypoint) as string[],
    createdAt: row.created_at,
  };
}
