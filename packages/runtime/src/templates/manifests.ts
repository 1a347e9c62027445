import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Errors, PaddockError } from "@paddock/common";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parse as parseToml } from "smol-toml";

const NonEmpty = Type.String({ minLength: 1 });

/** A variable a user passes in `env` at create: a provider credential, a base URL or a model. */
const TemplateEnv = Type.Object(
  {
    name: Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }),
    role: Type.Union([Type.Literal("credential"), Type.Literal("base-url"), Type.Literal("model")]),
    required: Type.Optional(Type.Boolean()),
    description: NonEmpty,
  },
  { additionalProperties: false },
);

/** A port the template serves. With `ready`, the sandbox is Running only once that path answers. */
const TemplatePort = Type.Object(
  {
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    name: NonEmpty,
    description: NonEmpty,
    ready: Type.Optional(Type.String({ pattern: "^/" })),
  },
  { additionalProperties: false },
);

/** `templates/<id>/template.toml`, as written. */
const Manifest = Type.Object(
  {
    id: Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,62}$" }),
    name: NonEmpty,
    description: NonEmpty,
    /** What the template ships that `[npm]` does not pin, in words ("Python 3.11 (Debian 12)"). */
    version: Type.Optional(NonEmpty),
    /** Another template whose image this one is built FROM. */
    base: Type.Optional(NonEmpty),
    image: Type.Optional(NonEmpty),
    entrypoint: Type.Optional(Type.Array(NonEmpty, { minItems: 1 })),
    resources: Type.Optional(
      Type.Object(
        { cpu: Type.Optional(NonEmpty), memory: Type.Optional(NonEmpty) },
        { additionalProperties: false },
      ),
    ),
    /** npm packages the build installs, each at exactly this version. */
    npm: Type.Optional(Type.Record(NonEmpty, Type.String({ pattern: "^\\d+\\.\\d+\\.\\d+\\S*$" }))),
    env: Type.Optional(Type.Array(TemplateEnv)),
    ports: Type.Optional(Type.Array(TemplatePort)),
  },
  { additionalProperties: false },
);

export type TemplateEnv = Static<typeof TemplateEnv>;
export type TemplatePort = Static<typeof TemplatePort>;

/** A template: a named image with the defaults a sandbox started from it gets. */
export interface Template {
  /** What a create names: a built-in template's id, or an account template's name. */
  id: string;
  name: string;
  description: string;
  image: string;
  /** The template's main process; execd runs beside it. */
  entrypoint: string[];
  resourceLimits: Record<string, string>;
  /** What it ships that `npm` does not pin, in words. */
  version?: string;
  /** Another template whose image this one's is built FROM. */
  base?: string;
  /** npm packages in the image, each at exactly this version. */
  npm: Record<string, string>;
  env: TemplateEnv[];
  ports: TemplatePort[];
  /** A shell command a create polls until it exits 0 (an account template's ready command). */
  readyCommand?: string;
  /** Set for a template an account built (decision 0198). */
  account?: { templateId: string; owner: string; published: boolean };
}

/** A template of the server's own, described by `templates/<id>/template.toml`. */
export interface BuiltInTemplate extends Template {
  /** The directory holding its Dockerfile (the build context). */
  dir: string;
}

const defaultTemplateEntrypoint = ["sleep", "infinity"];

/** The image a template id builds into. */
function templateImage(id: string): string {
  return `paddock/template-${id}:latest`;
}

/** 404 `template_not_found` for `id`, naming the templates there are. */
export function unknownTemplate(id: string, templates: Iterable<string>): PaddockError {
  return new PaddockError(
    Errors.templateNotFound,
    `no template ${id}; the templates are: ${[...templates].join(", ")}`,
  );
}

/** Loads every `<dir>/<id>/template.toml`; a malformed file is an error naming it and what is wrong. */
export function loadTemplates(dir: string): Map<string, BuiltInTemplate> {
  const templates = new Map<string, BuiltInTemplate>();
  if (!existsSync(dir)) return templates;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const file = join(dir, entry.name, "template.toml");
    if (!entry.isDirectory() || !existsSync(file)) continue;
    const raw = parseToml(readFileSync(file, "utf8"));
    if (!Value.Check(Manifest, raw)) {
      const problems = [...Value.Errors(Manifest, raw)].map(
        (error) => `${error.path || "/"} ${error.message}`,
      );
      throw new Error(`${file}: ${problems.join("; ")}`);
    }
    if (raw.id !== entry.name) throw new Error(`${file}: id "${raw.id}" must equal its directory's name`);
    const ports = raw.ports ?? [];
    if (new Set(ports.map((port) => port.port)).size !== ports.length)
      throw new Error(`${file}: a port is listed twice`);
    templates.set(raw.id, {
      id: raw.id,
      name: raw.name,
      description: raw.description,
      image: raw.image ?? templateImage(raw.id),
      entrypoint: raw.entrypoint ?? defaultTemplateEntrypoint,
      resourceLimits: { ...raw.resources },
      ...(raw.version ? { version: raw.version } : {}),
      ...(raw.base ? { base: raw.base } : {}),
      npm: raw.npm ?? {},
      env: raw.env ?? [],
      ports,
      dir: join(dir, entry.name),
    });
  }
  for (const template of templates.values()) {
    if (template.base && !templates.has(template.base))
      throw new Error(`template ${template.id}: base "${template.base}" is not a template`);
  }
  return templates;
}
