import { type Command, InvalidArgumentError, Option } from "commander";
import { type AuditEvent, Paddock } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { formatTime, printJson, printTable } from "../output.js";

interface AuditOptions extends GlobalOptions {
  type?: string;
  since?: string;
  until?: string;
  target?: string;
  limit: number;
  json?: boolean;
}

/** `paddock audit`: the account's audit log; `paddock audit export`: every account's, for operators. */
export function registerAuditCommands(program: Command): void {
  const audit = program
    .command("audit")
    .description("the account's audit log, newest first: logins, keys, secrets, sandboxes, limits hit, …")
    .option("--type <type>", "one event type (key.created), or a prefix ending in a dot (key.)")
    .option("--since <time>", "events at or after this time (RFC 3339)", rfc3339)
    .option("--until <time>", "events before this time (RFC 3339)", rfc3339)
    .option("--target <id>", "events about this id or name")
    .option("--limit <n>", "at most this many events", positiveInteger, 50)
    .option("--json", "print the events as JSON")
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<AuditOptions>();
      const paddock = new Paddock(connectionOf(options));
      const events: AuditEvent[] = [];
      let cursor: string | undefined;
      do {
        const page = await paddock.audit.list({
          ...(options.type ? { type: options.type } : {}),
          ...(options.since ? { since: options.since } : {}),
          ...(options.until ? { until: options.until } : {}),
          ...(options.target ? { target: options.target } : {}),
          limit: Math.min(options.limit - events.length, 200),
          ...(cursor ? { cursor } : {}),
        });
        events.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor && events.length < options.limit);
      if (options.json) printJson(events);
      else printTable(["TIME", "TYPE", "ACTOR", "ADDRESS", "TARGET", "DETAILS"], events.map(eventRow));
    });

  audit
    .command("export")
    .description("operator: every account's audit log (or one's) from this host's database, oldest first")
    .option("--account <email>", "only this account's events")
    .option("--since <time>", "events at or after this time (RFC 3339)", rfc3339)
    .addOption(
      new Option("--format <format>", "one JSON object a line, or CSV")
        .choices(["jsonl", "csv"])
        .default("jsonl"),
    )
    .option("--config <file>", "TOML configuration (default: $PADDOCK_CONFIG, then ./paddock.toml)")
    .action(async (_options, command: Command) => {
      // `--since` is the parent's option too: whichever of the two commander gave it to.
      const options = command.optsWithGlobals<{
        account?: string;
        since?: string;
        format: "jsonl" | "csv";
        config?: string;
      }>();
      const { runServerCommand } = await import("./server.js");
      await runServerCommand(async () => {
        const { loadConfig } = await import("@paddock/common");
        const { exportAuditLog } = await import("./audit-export.js");
        process.exitCode = await exportAuditLog(loadConfig({ file: options.config }), options);
      });
    });
}

function eventRow(event: AuditEvent): string[] {
  const actor = [event.actor.kind, event.actor.name ?? event.actor.id].filter(Boolean).join(" ");
  const target = event.target
    ? [event.target.type, event.target.name ?? event.target.id].filter(Boolean).join(" ")
    : "-";
  const details = Object.entries(event.details)
    .map(([name, value]) => `${name}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");
  return [formatTime(event.at), event.type, actor, event.actor.address ?? "-", target, details || "-"];
}

function rfc3339(value: string): string {
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) ||
    Number.isNaN(Date.parse(value))
  )
    throw new InvalidArgumentError("expected an RFC 3339 time, e.g. 2030-01-01T00:00:00Z");
  return value;
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new InvalidArgumentError("expected a whole number of 1 or more");
  return number;
}
