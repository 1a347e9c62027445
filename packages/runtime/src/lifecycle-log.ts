import type { Db } from "@paddock/db";

/** Human-readable lifecycle events per sandbox, served by the diagnostics API. */
export class LifecycleLog {
  constructor(private readonly db: Db) {}

  async record(sandboxId: string, kind: string, message: string): Promise<void> {
    await this.db
      .insertInto("sandbox_events")
      .values({ sandbox_id: sandboxId, at: new Date().toISOString(), kind, message })
      .execute();
  }

  async text(sandboxId: string): Promise<string> {
    const rows = await this.db
      .selectFrom("sandbox_events")
      .select(["at", "kind", "message"])
      .where("sandbox_id", "=", sandboxId)
      .orderBy("id")
      .execute();
    return rows.map((row) => `${row.at} ${row.kind} ${row.message}\n`).join("");
  }

  async forget(sandboxId: string): Promise<void> {
    await this.db.deleteFrom("sandbox_events").where("sandbox_id", "=", sandboxId).execute();
  }
}
