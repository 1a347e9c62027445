import type { Command } from "commander";
import { Sandbox } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { printJson, printTable } from "../output.js";

/**
 * `paddock templates list` (the server's catalogue) and `templates build` (the operator's build of
 * this host's images). The account's own templates are `paddock template …` (account-templates.ts).
 */
export function registerTemplateCommands(program: Command): void {
  const templates = program
    .command("templates")
    .description(
      "the templates sandboxes start from, and the operator's build of this host's images (your own: `paddock template`)",
    );

  templates
    .command("list")
    .description("list every template you can start from: built-in, your own, published")
    .option("--json", "print the templates as JSON")
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { json?: boolean }>();
      const items = await Sandbox.templates(connectionOf(options));
      if (options.json) printJson(items);
      else
        printTable(
          ["ID", "NAME", "PORTS", "DESCRIPTION"],
          items.map((template) => [
            template.id,
            template.name,
            template.ports.map((port) => `${port.port} (${port.name})`).join(", ") || "-",
            // One line each: the full text is in --json.
            template.description.length > 72 ? `${template.description.slice(0, 71)}…` : template.description,
          ]),
        );
    });

  templates
    .command("build")
    .description(
      "operator: build this host's built-in template images that are missing or stale, with its Docker (your account's own: `paddock template build`)",
    )
    .argument("[id...]", "the templates to build (default: all)")
    .option("--config <file>", "TOML configuration (default: $PADDOCK_CONFIG, then ./paddock.toml)")
    .option("--force", "rebuild the named templates (all, when none is named) even when current", false)
    .option(
      "--base <image>",
      "build templates that have no base template FROM this image",
      "paddock/base:bookworm",
    )
    .action(async (ids: string[], options: { config?: string; force: boolean; base: string }) => {
      const { runServerCommand } = await import("./server.js");
      await runServerCommand(async () => {
        const { loadConfig } = await import("@paddock/common");
        const { buildTemplatesCommand } = await import("./templates-build.js");
        await buildTemplatesCommand(loadConfig({ file: options.config }), ids, {
          force: options.force,
          baseImage: options.base,
        });
      });
    });

  for (const [verb, published] of [
    ["publish", true],
    ["unpublish", false],
  ] as const) {
    templates
      .command(verb)
      .description(
        published
          ? "operator: let every account start from an account's template, by its name (on this host's database)"
          : "operator: make a published template its account's own again",
      )
      .argument("<email>", "the account that built it")
      .argument("<name>", "the template's name")
      .option("--config <file>", "TOML configuration (default: $PADDOCK_CONFIG, then ./paddock.toml)")
      .action(async (email: string, name: string, options: { config?: string }) => {
        const { runServerCommand } = await import("./server.js");
        await runServerCommand(async () => {
          const { loadConfig } = await import("@paddock/common");
          const { publishTemplateCommand } = await import("./templates-publish.js");
          process.exitCode = await publishTemplateCommand(
            loadConfig({ file: options.config }),
            email,
            name,
            published,
          );
        });
      });
  }
}
