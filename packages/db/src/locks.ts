import { PostgresAdapter, sql, type Transaction } from "kysely";
import type { Database } from "./schema.js";

/**
 * Holds `key` until the transaction ends: transactions that lock the same key run one after
 * another, across replicas. Used where a count decides whether an insert may happen (an account's
 * sandboxes, its API keys), which no unique index can guard. PostgreSQL: a transaction-scoped
 * advisory lock on the key's hash (two keys sharing a hash only wait for each other). SQLite: one
 * process holds the one connection, which runs one transaction at a time, so nothing to do.
 */
export async function lockWithin(trx: Transaction<Database>, key: string): Promise<void> {
  if (!(trx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}
