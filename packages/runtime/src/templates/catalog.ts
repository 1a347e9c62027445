import type { PaddockError } from "@paddock/common";
import { type BuiltInTemplate, type Template, unknownTemplate } from "./manifests.js";
import type { AccountTemplate, TemplateRepository } from "./template-repository.js";

/** What a sandbox of a template without a start command runs beside execd. */
const idleEntrypoint = ["sleep", "infinity"];

/**
 * The templates a caller can start sandboxes from (decision 0198): the server's built-in ones,
 * then the caller's own (by name, or by id), then those the operator published. An account
 * template is there once a build of it has succeeded. A caller without an account (the runtime
 * API) sees the built-in and published ones.
 */
export class TemplateCatalog {
  constructor(
    readonly builtIn: Map<string, BuiltInTemplate>,
    private readonly repository: TemplateRepository,
  ) {}

  async find(name: string, owner: string | null | undefined): Promise<Template | undefined> {
    const builtIn = this.builtIn.get(name);
    if (builtIn) return builtIn;
    const own = owner ? await this.ownTemplate(name, owner) : undefined;
    const found = own ?? (await this.repository.findPublished(name));
    return found?.image ? asTemplate(found) : undefined;
  }

  /** `find`, or 404 `template_not_found` naming the templates the caller has. */
  async resolve(name: string, owner: string | null | undefined): Promise<Template> {
    const template = await this.find(name, owner);
    if (template) return template;
    throw await this.unknown(name, owner);
  }

  /** Every template the caller can start from: built in first, then by name. */
  async list(owner: string | null | undefined): Promise<Template[]> {
    const accounts = (await this.repository.listVisible(owner ?? null))
      .filter((template) => template.image && !this.builtIn.has(template.name))
      // The caller's own shadows a published one of the same name.
      .filter(
        (template, _index, all) =>
          template.owner === owner ||
          !all.some((other) => other.name === template.name && other.owner === owner),
      )
      .map(asTemplate);
    return [...this.builtIn.values(), ...accounts];
  }

  async unknown(name: string, owner: string | null | undefined): Promise<PaddockError> {
    return unknownTemplate(
      name,
      (await this.list(owner)).map((template) => template.id),
    );
  }

  private async ownTemplate(name: string, owner: string): Promise<AccountTemplate | undefined> {
    const byName = await this.repository.findByName(owner, name);
    if (byName) return byName;
    const byId = name.startsWith("tpl-") ? await this.repository.find(name) : undefined;
    return byId?.owner === owner ? byId : undefined;
  }
}

/** An account's template as the sandbox service sees one. */
export function asTemplate(template: AccountTemplate): Template {
  const { settings } = template;
  const start = settings.startCommand;
  return {
    id: template.name,
    name: template.name,
    description: template.description || `${template.name}, built by its account`,
    image: template.image as string,
    // The start command as the template's user, in its working directory; execd stays root.
    entrypoint: start
      ? settings.user === "root"
        ? ["/bin/sh", "-c", `cd ${shellQuote(settings.workdir)} && ${start}`]
        : [
            "runuser",
            "-u",
            settings.user,
            "--",
            "/bin/sh",
            "-c",
            `cd ${shellQuote(settings.workdir)} && ${start}`,
          ]
      : idleEntrypoint,
    resourceLimits: settings.resources,
    npm: {},
    env: [],
    ports: [],
    ...(settings.readyCommand ? { readyCommand: settings.readyCommand } : {}),
    account: { templateId: template.id, owner: template.owner, published: template.published },
  };
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
