import { formatBytes } from "@paddock/common/format";
import type { Command } from "commander";
import { type BuildLogEntry, Paddock, TemplateBuildError } from "paddock";
import { BuildProgress } from "../build-progress.js";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { CliError, formatTime, printJson, printRecord, printTable } from "../output.js";

interface BuildCommandOptions extends GlobalOptions {
  name: string;
  file?: string;
  cpu?: string;
  memory?: string;
  force?: boolean;
  description?: string;
}

/**
 * `paddock template build|list|show|logs|cancel|delete`: the account's own templates, built by the
 * server (decision 0198). Not `paddock templates build`, the operator's build of this host's images.
 */
export function registerAccountTemplateCommands(program: Command): void {
  const template = program
    .command("template")
    .description(
      "your account's own templates, built by the server from a Dockerfile (`templates build` is the operator's)",
    );
  const client = <T extends GlobalOptions>(command: Command) => {
    const options = command.optsWithGlobals<T & { json?: boolean }>();
    return { options, paddock: new Paddock(connectionOf(options)) };
  };

  template
    .command("build")
    .description("build a template of your account from a directory holding a Dockerfile, showing its log")
    .argument("<directory>", "the build context: sent as `docker build` would, less what .dockerignore names")
    .requiredOption("--name <name>", "the template's name: 1 to 63 of a-z, 0-9, '.', '_', '-'")
    .option("--file <path>", "the Dockerfile's path in the directory", "Dockerfile")
    .option("--cpu <cpus>", "CPUs of each sandbox started from it, like 2 (default: its base's)")
    .option("--memory <size>", "memory of each sandbox started from it, like 2Gi (default: its base's)")
    .option("--force", "run every step again, none from the cache")
    .option("--description <text>", "what the template is for")
    .addHelpText(
      "after",
      "\nCtrl-C cancels the build. Exits 0 once the template is ready; 1 with the reason when a step fails.\nThen: paddock sandbox create --template NAME",
    )
    .action(async (directory: string, _options, command: Command) => {
      const { options, paddock } = client<BuildCommandOptions>(command);
      const progress = new BuildProgress(options.name);
      const interrupt = new AbortController();
      const cancel = () => interrupt.abort();
      process.once("SIGINT", cancel);
      let ready = false;
      try {
        const build = await paddock.templates.build(options.name, {
          context: directory,
          ...(options.file ? { dockerfile: options.file } : {}),
          ...(options.description !== undefined ? { description: options.description } : {}),
          ...(options.cpu || options.memory
            ? {
                resourceLimits: {
                  ...(options.cpu ? { cpu: options.cpu } : {}),
                  ...(options.memory ? { memory: options.memory } : {}),
                },
              }
            : {}),
          ...(options.force ? { force: true } : {}),
          onLog: (entry) => progress.line(entry),
          signal: interrupt.signal,
        });
        ready = true;
        progress.stop(true);
        console.log(
          `Built template ${options.name} (build ${build.id}${build.imageBytes ? `, ${formatBytes(build.imageBytes)}` : ""}); start it with: paddock sandbox create --template ${options.name}`,
        );
      } catch (error) {
        if (!ready) progress.stop(false);
        if (interrupt.signal.aborted)
          throw new CliError(`cancelled the build of template ${options.name}`, "cancelled", 130);
        throw error;
      } finally {
        process.removeListener("SIGINT", cancel);
      }
    });

  template
    .command("list")
    .description("list your account's own templates (`templates list`: every one you can start from)")
    .option("--json", "print the templates as JSON")
    .action(async (_options, command: Command) => {
      const { options, paddock } = client(command);
      const items = await paddock.templates.list();
      if (options.json) printJson(items);
      else
        printTable(
          ["NAME", "CURRENT BUILD", "RESOURCES", "UPDATED", "DESCRIPTION"],
          items.map((item) => [
            item.name,
            item.currentBuildId ?? "none ready",
            Object.entries(item.resourceLimits)
              .map(([name, value]) => `${name} ${value}`)
              .join(", ") || "-",
            formatTime(item.updatedAt),
            item.description.length > 60 ? `${item.description.slice(0, 59)}…` : item.description || "-",
          ]),
        );
    });

  template
    .command("show")
    .description("show one of your templates and its builds, newest first")
    .argument("<name>", "the template's name")
    .option("--json", "print the template as JSON")
    .action(async (name: string, _options, command: Command) => {
      const { options, paddock } = client(command);
      const detail = await paddock.templates.get(name);
      if (options.json) {
        printJson(detail);
        return;
      }
      printRecord([
        ["name", detail.name],
        ["id", detail.id],
        ["description", detail.description || "-"],
        ["current build", detail.currentBuildId ?? "none ready"],
        ["user", detail.user],
        ["workdir", detail.workdir],
        ["start command", detail.startCommand],
        ["ready command", detail.readyCommand],
        [
          "resources",
          Object.entries(detail.resourceLimits)
            .map(([key, value]) => `${key} ${value}`)
            .join(", ") || "-",
        ],
        ["created", formatTime(detail.createdAt)],
      ]);
      console.log();
      printTable(
        ["BUILD", "STATUS", "SIZE", "CREATED", "FINISHED", "REASON"],
        detail.builds.map((build) => [
          build.id,
          build.status,
          build.imageBytes ? formatBytes(build.imageBytes) : "-",
          formatTime(build.createdAt),
          formatTime(build.finishedAt),
          build.reason ? (build.reason.length > 80 ? `${build.reason.slice(0, 79)}…` : build.reason) : "-",
        ]),
      );
    });

  template
    .command("logs")
    .description("print a build's log (default: the newest build's)")
    .argument("<name>", "the template's name")
    .argument("[build]", "the build's id (see `paddock template show NAME`)")
    .option("-f, --follow", "keep printing while the build runs; exit 1 when it fails")
    .action(async (name: string, buildId: string | undefined, _options, command: Command) => {
      const { options, paddock } = client<GlobalOptions & { follow?: boolean }>(command);
      const id = buildId ?? (await paddock.templates.get(name)).builds[0]?.id;
      if (!id) throw new CliError(`template ${name} has no builds`, "template_build_not_found");
      const print = (entry: BuildLogEntry) => process.stdout.write(`${entry.message}\n`);
      if (options.follow) {
        // Ctrl-C stops following; the build runs on (`paddock template cancel` stops it).
        const build = await paddock.templates.follow(name, id, { onLog: print });
        if (build.status !== "ready") throw new TemplateBuildError(build);
        return;
      }
      for (let from = 0; ; ) {
        const page = await paddock.templates.logs(name, id, { from, limit: 1000 });
        page.entries.forEach(print);
        if (page.entries.length < 1000) break;
        from = page.next;
      }
    });

  template
    .command("cancel")
    .description("stop a running build; the template keeps its current build")
    .argument("<name>", "the template's name")
    .argument("<build>", "the build's id")
    .action(async (name: string, buildId: string, _options, command: Command) => {
      await client(command).paddock.templates.cancel(name, buildId);
      console.log(`Cancelling build ${buildId} of template ${name}`);
    });

  template
    .command("delete")
    .description("delete a template, its builds and images (refused while sandboxes run from it)")
    .argument("<name>", "the template's name")
    .action(async (name: string, _options, command: Command) => {
      await client(command).paddock.templates.delete(name);
      console.log(`Deleted template ${name}`);
    });
}
