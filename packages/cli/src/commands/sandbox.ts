import { setTimeout } from "node:timers/promises";
import { type Command, InvalidArgumentError } from "commander";
import { Sandbox, type SandboxInfo, type VolumeMountOptions } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { CliError, collect, collectPair, formatTime, printJson, printRecord, printTable } from "../output.js";

const settleTimeoutMs = 60_000;

interface SandboxOptions extends GlobalOptions {
  json?: boolean;
  quiet?: boolean;
  template: string;
  timeout?: number;
  env?: Record<string, string>;
  secret: string[];
  volume: VolumeMountOptions[];
  metadata?: Record<string, string>;
  state: string[];
}

/** `paddock sandbox create|list|get|kill|pause|resume|renew`. */
export function registerSandboxCommands(program: Command): void {
  const sandbox = program.command("sandbox").description("create, list and manage sandboxes");
  const optionsOf = (command: Command) => command.optsWithGlobals<SandboxOptions>();

  sandbox
    .command("create")
    .description("create a sandbox from a template and print it")
    .option("--template <id>", "the template (see `paddock templates list`)", "python")
    .option("--timeout <seconds>", "lifetime in seconds (default: no expiry)", wholeSeconds)
    .option("--env <KEY=VALUE>", "an environment variable (repeatable)", collectPair)
    .option(
      "--secret <NAME[=VARIABLE]>",
      "a stored secret as an environment variable, named VARIABLE or NAME (repeatable)",
      collect,
      [],
    )
    .option("--metadata <KEY=VALUE>", "a metadata entry (repeatable)", collectPair)
    .option(
      "--volume <NAME:/PATH[:ro]>",
      "mount the account's volume NAME at /PATH, read-only with :ro (repeatable; see `paddock volumes`)",
      collectVolume,
      [],
    )
    .option("--json", "print the sandbox as JSON")
    .option("-q, --quiet", "print only its id (for `id=$(paddock sandbox create -q)`)")
    .action(async (_options, command: Command) => {
      const options = optionsOf(command);
      const created = await Sandbox.create({
        ...connectionOf(options),
        template: options.template,
        ...(options.timeout !== undefined ? { timeoutSeconds: options.timeout } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(options.metadata ? { metadata: options.metadata } : {}),
        ...(options.secret.length ? { secrets: secretVariables(options.secret) } : {}),
        ...(options.volume.length ? { volumes: options.volume } : {}),
      });
      if (options.quiet) process.stdout.write(`${created.id}\n`);
      else printSandbox(created, options.json);
    });

  sandbox
    .command("list")
    .description("list the account's sandboxes")
    .option(
      "--state <state>",
      "only sandboxes in this state, e.g. Running or Paused (repeatable)",
      collect,
      [],
    )
    .option("--json", "print the sandboxes as JSON")
    .option("-q, --quiet", "print only their ids")
    .action(async (_options, command: Command) => {
      const options = optionsOf(command);
      const items: SandboxInfo[] = [];
      for (let page = 1; ; page++) {
        const list = await Sandbox.list({
          ...connectionOf(options),
          state: options.state,
          page,
          pageSize: 200,
        });
        items.push(...list.items);
        if (!list.pagination.hasNextPage) break;
      }
      if (options.quiet) for (const info of items) process.stdout.write(`${info.id}\n`);
      else if (options.json) printJson(items);
      else
        printTable(
          ["ID", "STATE", "TEMPLATE", "CREATED", "EXPIRES"],
          items.map((info) => [
            info.id,
            info.state,
            info.template,
            formatTime(info.createdAt),
            formatTime(info.expiresAt, "never"),
          ]),
        );
    });

  sandbox
    .command("get")
    .description("show one sandbox")
    .argument("<id>", "the sandbox's id")
    .option("--json", "print the sandbox as JSON")
    .action(async (id: string, _options, command: Command) => {
      const options = optionsOf(command);
      printSandbox(await Sandbox.connect(id, connectionOf(options)), options.json);
    });

  sandbox
    .command("kill")
    .description("delete a sandbox and everything in it")
    .argument("<id>", "the sandbox's id")
    .action(async (id: string, _options, command: Command) => {
      await Sandbox.kill(id, connectionOf(optionsOf(command)));
      console.log(`Killed ${id}`);
    });

  for (const [name, passing, description] of [
    ["pause", "Pausing", "freeze a running sandbox (its minutes stop counting); returns once it is Paused"],
    ["resume", "Resuming", "start a paused sandbox again; returns once it is Running"],
  ] as const) {
    sandbox
      .command(name)
      .description(description)
      .argument("<id>", "the sandbox's id")
      .option("--json", "print the sandbox as JSON")
      .action(async (id: string, _options, command: Command) => {
        const options = optionsOf(command);
        const found = await Sandbox.connect(id, connectionOf(options));
        await found[name]();
        await leaveState(found, passing);
        printSandbox(found, options.json);
      });
  }

  sandbox
    .command("renew")
    .description("give a sandbox a new lifetime, counted from now")
    .argument("<id>", "the sandbox's id")
    .requiredOption("--timeout <seconds>", "the new lifetime in seconds", wholeSeconds)
    .option("--json", "print the sandbox as JSON")
    .action(async (id: string, _options, command: Command) => {
      const options = optionsOf(command);
      const found = await Sandbox.connect(id, connectionOf(options));
      await found.renew(options.timeout as number);
      printSandbox(found, options.json);
    });
}

/** Pausing and resuming finish after the call answers: wait for the state the user asked for. */
async function leaveState(sandbox: Sandbox, passing: string): Promise<void> {
  const deadline = Date.now() + settleTimeoutMs;
  while (sandbox.state === passing) {
    if (Date.now() > deadline)
      throw new CliError(`${sandbox.id} is still ${passing} after ${settleTimeoutMs / 1000} s`, "timeout");
    await setTimeout(100);
    await sandbox.refresh();
  }
}

function wholeSeconds(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new InvalidArgumentError("a whole number of seconds ≥ 1");
  return parsed;
}

/** `NAME` injects the secret NAME as $NAME; `NAME=VARIABLE` as $VARIABLE. */
/** `--volume NAME:/PATH[:ro]`, collected. */
function collectVolume(spec: string, previous: VolumeMountOptions[] = []): VolumeMountOptions[] {
  const parts = spec.split(":");
  const mode = parts.length === 3 ? parts.pop() : undefined;
  const [volume = "", mountPath = ""] = parts;
  if (
    parts.length !== 2 ||
    !volume ||
    !mountPath.startsWith("/") ||
    (mode !== undefined && mode !== "ro" && mode !== "rw")
  )
    throw new InvalidArgumentError("give NAME:/PATH, or NAME:/PATH:ro for a read-only mount");
  return [...previous, { volume, mountPath, ...(mode === "ro" ? { readOnly: true } : {}) }];
}

function secretVariables(specs: string[]): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const spec of specs) {
    const [name = "", variable = name] = spec.split("=", 2);
    variables[variable] = name;
  }
  return variables;
}

/** The sandbox as the API describes it. */
function printSandbox(sandbox: Sandbox, json: boolean | undefined): void {
  const record = sandbox.toJSON();
  if (json) {
    printJson(record);
    return;
  }
  printRecord([
    ["id", record.id],
    ["state", record.state],
    ["template", record.template],
    ["expires", formatTime(record.expiresAt, "never")],
    [
      "metadata",
      Object.entries(record.metadata)
        .map(([key, value]) => `${key}=${value}`)
        .join(" ") || "-",
    ],
  ]);
}
