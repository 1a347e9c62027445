import { newId } from "@paddock/common";
import { type Kysely, sql } from "kysely";
import type { AuditEventsTable, Database } from "./schema.js";

/** Who did it: a session or key of the account, a password at login, or the server itself. */
export interface AuditActor {
  kind: "session" | "key" | "password" | "anonymous" | "system" | "billing";
  /** The key's id, or a short handle of the session (never the token). */
  id?: string | null;
  /** The key's name, when it has one. */
  name?: string | null;
  /** The client address the request came from. */
  address?: string | null;
}

/** What it was done to. */
export interface AuditTarget {
  type: string;
  id?: string | null;
  name?: string | null;
}

export interface NewAuditEvent {
  accountId: string;
  type: string;
  actor: AuditActor;
  target?: AuditTarget | null;
  /** Small facts about the event; never a secret's value, a key, a password or a token. */
  details?: Record<string, string | number | boolean | null>;
}

export interface AuditEvent {
  id: string;
  accountId: string;
  at: string;
  type: string;
  actor: { kind: string; id: string | null; name: string | null; address: string | null };
  target: { type: string; id: string | null; name: string | null } | null;
  details: Record<string, unknown>;
}

export interface AuditQuery {
  /** `key.created`; one ending in `.` (`key.`) matches every type it begins. */
  type?: string | undefined;
  /** RFC 3339; events at or after. */
  since?: string | undefined;
  /** RFC 3339; events before. */
  until?: string | undefined;
  /** The target's id or name. */
  target?: string | undefined;
}

/** Anything that runs queries: the database or a transaction in progress. */
type Executor = Kysely<Database>;

/**
 * The audit log (decision 0204): append and read, nothing else. The table's triggers refuse
 * UPDATE, DELETE (and TRUNCATE on PostgreSQL), so a row once written stays.
 */
export class AuditLog {
  constructor(private readonly db: Kysely<Database>) {}

  /** Appends one event; pass a transaction to write it with the change it records. */
  append(event: NewAuditEvent, executor: Executor = this.db): Promise<AuditEvent> {
    return appendAuditEvent(executor, event);
  }

  /**
   * The account's events, newest first: at most `limit`, and the cursor of the next page (the
   * events older than the last one here), or null after the last page.
   */
  async list(
    accountId: string,
    query: AuditQuery & { limit: number; cursor?: string | undefined },
  ): Promise<{ items: AuditEvent[]; nextCursor: string | null }> {
    let select = filtered(this.db, query).where("account_id", "=", accountId);
    if (query.cursor !== undefined) select = select.where("seq", "<", Number(query.cursor));
    const rows = await select
      .orderBy("seq", "desc")
      .limit(query.limit + 1)
      .execute();
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      items: page.map(toEvent),
      nextCursor: rows.length > query.limit && last ? String(last.seq) : null,
    };
  }

  /** Every event (of one account, or all), oldest first, a batch at a time: for operators' exports. */
  async *export(query: AuditQuery & { accountId?: string | undefined }): AsyncGenerator<AuditEvent> {
    let after = 0;
    for (;;) {
      let select = filtered(this.db, query).where("seq", ">", after);
      if (query.accountId !== undefined) select = select.where("account_id", "=", query.accountId);
      const rows = await select.orderBy("seq", "asc").limit(500).execute();
      for (const row of rows) yield toEvent(row);
      const last = rows.at(-1);
      if (!last || rows.length < 500) return;
      after = last.seq;
    }
  }
}

/** Appends one event through `executor` (the database, or a transaction the change runs in). */
export async function appendAuditEvent(executor: Executor, event: NewAuditEvent): Promise<AuditEvent> {
  const row = {
    id: newId("aud"),
    account_id: event.accountId,
    at: new Date().toISOString(),
    type: event.type,
    actor_kind: event.actor.kind,
    actor_id: event.actor.id ?? null,
    actor_name: event.actor.name ?? null,
    actor_address: event.actor.address ?? null,
    target_type: event.target?.type ?? null,
    target_id: event.target?.id ?? null,
    target_name: event.target?.name ?? null,
    details: JSON.stringify(event.details ?? {}),
  };
  await executor.insertInto("audit_events").values(row).execute();
  return toEvent(row);
}

function filtered(db: Kysely<Database>, query: AuditQuery) {
  let select = db.selectFrom("audit_events").selectAll();
  const { type, since, until, target } = query;
  if (type !== undefined) {
    // A prefix is compared as text: `_` in a LIKE pattern would match any character.
    select = type.endsWith(".")
      ? select.where(sql<boolean>`substr(type, 1, ${type.length}) = ${type}`)
      : select.where("type", "=", type);
  }
  if (since !== undefined) select = select.where("at", ">=", new Date(since).toISOString());
  if (until !== undefined) select = select.where("at", "<", new Date(until).toISOString());
  if (target !== undefined)
    select = select.where((eb) => eb.or([eb("target_id", "=", target), eb("target_name", "=", target)]));
  return select;
}

function toEvent(row: Omit<AuditEventsTable, "seq">): AuditEvent {
  return {
    id: row.id,
    accountId: row.account_id,
    at: row.at,
    type: row.type,
    actor: {
      kind: row.actor_kind,
      id: row.actor_id,
      name: row.actor_name,
      address: row.actor_address,
    },
    target: row.target_type ? { type: row.target_type, id: row.target_id, name: row.target_name } : null,
    details: JSON.parse(row.details) as Record<string, unknown>,
  };
}
