import type { Command } from "commander";
import { Paddock } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { formatTime, printJson, printTable } from "../output.js";
import { valueOrPrompt } from "../prompts.js";

/** `paddock secrets list|set|delete`: values go in, only names come back. */
export function registerSecretCommands(program: Command): void {
  const secrets = program
    .command("secrets")
    .description("values kept encrypted and injected into sandboxes (sandbox create --secret)");
  const client = (command: Command) => {
    const options = command.optsWithGlobals<GlobalOptions & { json?: boolean }>();
    return { options, paddock: new Paddock(connectionOf(options)) };
  };

  secrets
    .command("list")
    .description("list the secrets' names (never their values)")
    .option("--json", "print the secrets as JSON")
    .action(async (_options, command: Command) => {
      const { options, paddock } = client(command);
      const items = await paddock.secrets.list();
      if (options.json) printJson(items);
      else
        printTable(
          ["NAME", "CREATED", "UPDATED"],
          items.map((secret) => [secret.name, formatTime(secret.createdAt), formatTime(secret.updatedAt)]),
        );
    });

  secrets
    .command("set")
    .description("create a secret or replace its value")
    .argument("<name>", "letters, digits and underscores, not starting with a digit")
    .argument("[value]", "the value; when missing, read from stdin (asked for, hidden, on a terminal)")
    .addHelpText(
      "after",
      "\nA value read from a pipe loses one trailing newline: `echo $TOKEN | paddock secrets set TOKEN`.",
    )
    .action(async (name: string, value: string | undefined, _options, command: Command) => {
      const secret = value ?? (await valueFromStdin());
      await client(command).paddock.secrets.set(name, secret);
      console.log(`Set secret ${name}`);
    });

  secrets
    .command("delete")
    .description("delete a secret")
    .argument("<name>", "the secret's name")
    .action(async (name: string, _options, command: Command) => {
      await client(command).paddock.secrets.delete(name);
      console.log(`Deleted secret ${name}`);
    });
}

async function valueFromStdin(): Promise<string> {
  if (process.stdin.isTTY)
    return valueOrPrompt(undefined, { message: "Value:", option: "VALUE", hidden: true });
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}
