import { isPaddockError, type PaddockConfig } from "@paddock/common";
import { auditEventsOf } from "@paddock/server";

type AuditEvent = AuditEventsOf extends AsyncGenerator<infer Event> ? Event : never;
type AuditEventsOf = ReturnType<typeof auditEventsOf>;

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
 * `paddock audit export` (decision 0204): the audit log from the server's database, oldest
 * first, to stdout as JSON lines or CSV. Answers the exit status.
 */
export async function exportAuditLog(
  config: PaddockConfig,
  options: { account?: string | undefined; since?: string | undefined; format: "jsonl" | "csv" },
): Promise<number> {
  try {
    let first = true;
    for await (const event of auditEventsOf(config, { email: options.account, since: options.since })) {
      // The header once the account is known to exist, so a refusal prints nothing on stdout.
      if (first && options.format === "csv") await write(`${csvColumns.join(",")}\n`);
      first = false;
      await write(options.format === "csv" ? `${csvLine(event)}\n` : `${JSON.stringify(event)}\n`);
    }
    if (first && options.format === "csv") await write(`${csvColumns.join(",")}\n`);
    return 0;
  } catch (error) {
    if (!isPaddockError(error)) throw error;
    console.error(`paddock: ${error.message}`);
    return 1;
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
