import { type Command, Option } from "commander";
import { type ApiKey, type ApiKeyWithSecret, Paddock } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { formatTime, printJson, printTable } from "../output.js";

interface KeyOptions extends GlobalOptions {
  json?: boolean;
  name?: string;
  scope?: "sandboxes" | "memory" | "secrets";
  expiresAt?: string;
  format?: "paddock" | "e2b";
}

/** `paddock keys list|create|delete|rotate`. */
export function registerKeyCommands(program: Command): void {
  const keys = program.command("keys").description("API keys of the account");
  const client = (command: Command) => {
    const options = command.optsWithGlobals<KeyOptions>();
    return { options, paddock: new Paddock(connectionOf(options)) };
  };

  keys
    .command("list")
    .description("list the account's API keys (never their secrets)")
    .option("--json", "print the keys as JSON")
    .action(async (_options, command: Command) => {
      const { options, paddock } = client(command);
      const items = await paddock.keys.list();
      if (options.json) printJson(items);
      else
        printTable(["ID", "NAME", "PREFIX", "SCOPE", "CREATED", "EXPIRES", "LAST USED"], items.map(keyRow));
    });

  keys
    .command("create")
    .description("create an API key; its secret is shown once")
    .option("--name <name>", "a name to recognise it by")
    .addOption(
      new Option("--scope <scope>", "limit it to one surface").choices(["sandboxes", "memory", "secrets"]),
    )
    .option("--expires-at <time>", "when it stops working (RFC 3339, e.g. 2030-01-01T00:00:00Z)")
    .addOption(
      new Option("--format <format>", "the secret's shape: e2b for E2B's SDKs (e2b_ and hex)").choices([
        "paddock",
        "e2b",
      ]),
    )
    .option("--json", "print the key and its secret as JSON")
    .action(async (_options, command: Command) => {
      const { options, paddock } = client(command);
      const created = await paddock.keys.create({
        ...(options.name ? { name: options.name } : {}),
        ...(options.scope ? { scope: options.scope } : {}),
        ...(options.expiresAt ? { expiresAt: options.expiresAt } : {}),
        ...(options.format ? { format: options.format } : {}),
      });
      printCreated(created, options.json);
    });

  keys
    .command("delete")
    .description("delete an API key; it stops working at once")
    .argument("<id>", "the key's id")
    .action(async (id: string, _options, command: Command) => {
      await client(command).paddock.keys.delete(id);
      console.log(`Deleted key ${id}`);
    });

  keys
    .command("rotate")
    .description("replace a key's secret; the old secret stops working")
    .argument("<id>", "the key's id")
    .option("--json", "print the key and its new secret as JSON")
    .action(async (id: string, _options, command: Command) => {
      const { options, paddock } = client(command);
      printCreated(await paddock.keys.rotate(id), options.json);
    });
}

function keyRow(key: ApiKey) {
  return [
    key.id,
    key.name,
    key.prefix,
    key.scope ?? "all",
    formatTime(key.createdAt),
    formatTime(key.expiresAt, "never"),
    formatTime(key.lastUsedAt, "never"),
  ];
}

function printCreated(created: ApiKeyWithSecret, json: boolean | undefined): void {
  if (json) {
    printJson(created);
    return;
  }
  console.log(
    `Key ${created.key.id}${created.key.name ? ` (${created.key.name})` : ""}; its secret, shown only now:`,
  );
  console.log(created.secret);
}
