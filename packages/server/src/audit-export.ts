import { Errors, type PaddockConfig, PaddockError } from "@paddock/common";
import { type AuditEvent, AuditLog, openDatabase } from "@paddock/db";
import { databaseUrl } from "@paddock/runtime";

/**
 * The audit log straight from the server's database (decision 0204), oldest first: every
 * account's, or one's by email (an unknown email is `not_found`). For `paddock audit export`.
 */
export async function* auditEventsOf(
  config: PaddockConfig,
  options: { email?: string | undefined; since?: string | undefined },
): AsyncGenerator<AuditEvent> {
  const database = await openDatabase(databaseUrl(config));
  try {
    let accountId: string | undefined;
    if (options.email !== undefined) {
      const account = await database.db
        .selectFrom("accounts")
        .select("id")
        .where("email", "=", options.email.trim().toLowerCase())
        .executeTakeFirst();
      if (!account) throw new PaddockError(Errors.notFound, `no account ${options.email}`);
      accountId = account.id;
    }
    yield* new AuditLog(database.db).export({ accountId, since: options.since });
  } finally {
    await database.close();
  }
}
