import { setTimeout } from "node:timers/promises";
import { type Command, InvalidArgumentError } from "commander";
import { Sandbox, type SandboxInfo, type VolumeMountOptions } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { describeSleep, describeState, durationOrNever, secondsOrNull } from "../lifecycle.js";
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
  onTimeout?: "kill" | "pause";
  idleTimeout?: number | "never";
  maxPaused?: number | "never";
  autoResume: boolean;
  processesKeepAwake: boolean;
  keepMemory: boolean;
  toDisk?: boolean;
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
    .option("--on-timeout <kill|pause>", "what happens when the timeout passes (default: kill)", onTimeout)
    .option(
      "--idle-timeout <duration|never>",
      "pause after this long without use, e.g. 15m (default: the plan's)",
      durationOrNever,
    )
    .option(
      "--max-paused <duration|never>",
      "delete after this long paused, e.g. 30d (default: the plan's)",
      durationOrNever,
    )
    .option("--no-auto-resume", "a command or file call on it while paused fails instead of resuming it")
    .option("--no-processes-keep-awake", "pause when idle even while a command it started still runs")
    .option("--no-keep-memory", "a pause to disk keeps the filesystem only (its processes start again)")
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
        lifecycle: {
          ...(options.onTimeout ? { onTimeout: options.onTimeout } : {}),
          ...(options.idleTimeout !== undefined ? { idleTimeout: secondsOrNull(options.idleTimeout) } : {}),
          ...(options.maxPaused !== undefined ? { maxPaused: secondsOrNull(options.maxPaused) } : {}),
          ...(options.autoResume ? {} : { autoResume: false }),
          ...(options.processesKeepAwake ? {} : { processesKeepAwake: false }),
          ...(options.keepMemory ? {} : { keepMemory: false }),
        },
      });
      if (options.quiet) process.stdout.write(`${created.id}\n`);
      else printSandbox(created, options.json);
      // What the plan chose for the user, said once, where they can still change it.
      if (
        !options.quiet &&
        !options.json &&
        (options.idleTimeout === undefined || options.maxPaused === undefined)
      )
        console.log(
          `\nThe plan's default applied: ${describeSleep(created.lifecycle)} (--idle-timeout, --max-paused to choose).`,
        );
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
          ["ID", "STATE", "TEMPLATE", "CREATED", "EXPIRES", "IDLES AT"],
          items.map((info) => [
            info.id,
            describeState(info),
            info.template,
            formatTime(info.createdAt),
            formatTime(info.expiresAt, "never"),
            formatTime(info.idleAt),
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

  sandbox
    .command("pause")
    .description(
      "pause a sandbox (its minutes stop counting): frozen in memory, or with --to-disk off the host's memory; returns once it is Paused",
    )
    .argument("<id>", "the sandbox's id")
    .option("--to-disk", "pause to disk (also moves one paused in memory there)")
    .option("--json", "print the sandbox as JSON")
    .action(async (id: string, _options, command: Command) => {
      const options = optionsOf(command);
      const found = await Sandbox.connect(id, connectionOf(options));
      await found.pause(options.toDisk ? { to: "disk" } : {});
      await leaveState(found, "Pausing");
      printSandbox(found, options.json);
    });

  sandbox
    .command("resume")
    .description("start a paused sandbox again; returns once it is Running")
    .argument("<id>", "the sandbox's id")
    .option("--json", "print the sandbox as JSON")
    .action(async (id: string, _options, command: Command) => {
      const options = optionsOf(command);
      const found = await Sandbox.connect(id, connectionOf(options));
      await found.resume();
      await leaveState(found, "Resuming");
      printSandbox(found, options.json);
    });

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

function onTimeout(value: string): "kill" | "pause" {
  if (value !== "kill" && value !== "pause") throw new InvalidArgumentError('"kill" or "pause"');
  return value;
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
    ["state", describeState(record)],
    ["template", record.template],
    ["expires", formatTime(record.expiresAt, "never")],
    ["on timeout", record.lifecycle.onTimeout === "pause" ? "pause" : "kill"],
    ["sleep", describeSleep(record.lifecycle)],
    [
      "on use",
      `${record.lifecycle.autoResume ? "resumes when paused" : "stays paused until resumed"}; ${record.lifecycle.processesKeepAwake ? "running processes keep it awake" : "running processes do not keep it awake"}`,
    ],
    ["idles at", formatTime(record.idleAt)],
    ["last used", formatTime(record.lastActivityAt)],
    ...(record.pausedUntil
      ? ([["deleted at", formatTime(record.pausedUntil)]] as Array<[string, string]>)
      : []),
    [
      "metadata",
      Object.entries(record.metadata)
        .map(([key, value]) => `${key}=${value}`)
        .join(" ") || "-",
    ],
  ]);
}
