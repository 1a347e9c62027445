import type { PaddockConfig } from "@paddock/common";
import { type AuditEvent, AuditLog, openDatabase } from "@paddock/db";
import { databaseUrl } from "@paddock/runtime";

const csvColumns = [
  "id",
  "account_id",
  "at",
  "type",
  "actor_kind",
  "actor_id",
  "actor_name",
  "actor_address",
  "target_type",
  "target_id",
  "target_name",
  "details",
] as const;

/**
 * `paddock audit export` (decision 0204): the audit log straight from the database, oldest first,
 * to stdout as JSON lines or CSV. Answers the exit status.
 */
export async function exportAuditLog(
  config: PaddockConfig,
  options: { account?: string | undefined; since?: string | undefined; format: "jsonl" | "csv" },
): Promise<number> {
  const database = await openDatabase(databaseUrl(config));
  try {
    let accountId: string | undefined;
    if (options.account !== undefined) {
      const account = await database.db
        .selectFrom("accounts")
        .select("id")
        .where("email", "=", options.account.trim().toLowerCase())
        .executeTakeFirst();
      if (!account) {
        console.error(`paddock: no account ${options.account}`);
        return 1;
      }
      accountId = account.id;
    }
    if (options.format === "csv") await write(`${csvColumns.join(",")}\n`);
    for await (const event of new AuditLog(database.db).export({ accountId, since: options.since }))
      await write(options.format === "csv" ? `${csvLine(event)}\n` : `${JSON.stringify(event)}\n`);
    return 0;
  } finally {
    await database.close();
  }
}

/** Writes to stdout, waiting while its reader is behind. */
function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

function csvLine(event: AuditEvent): string {
  const cells = [
    event.id,
    event.accountId,
    event.at,
    event.type,
    event.actor.kind,
    event.actor.id,
    event.actor.name,
    event.actor.address,
    event.target?.type,
    event.target?.id,
    event.target?.name,
    JSON.stringify(event.details),
  ];
  return cells.map(csvCell).join(",");
}

/**
 * RFC 4180 quoting. A cell a spreadsheet would run as a formula (a key named `=HYPERLINK(…)`)
 * starts with an apostrophe instead.
 */
function csvCell(value: string | null | undefined): string {
  if (value === null || value === undefined) return "";
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
