import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";

/** A template: a named image with defaults, described by `templates/<id>/template.toml`. */
export interface Template {
  id: string;
  name: string;
  description: string;
  image: string;
  /** The template's main process; execd runs beside it. */
  entrypoint: string[];
  resourceLimits: Record<string, string>;
}

/** Loads every `<dir>/<id>/template.toml`; a malformed file is an error naming it. */
export function loadTemplates(dir: string): Map<string, Template> {
  const templates = new Map<string, Template>();
  if (!existsSync(dir)) return templates;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name, "template.toml");
    if (!entry.isDirectory() || !existsSync(file)) continue;
    const raw = parseToml(readFileSync(file, "utf8")) as Record<string, unknown>;
    const text = (key: string, fallback?: string): string => {
      const value = raw[key] ?? fallback;
      if (typeof value !== "string" || value === "")
        throw new Error(`${file}: "${key}" must be a non-empty string`);
      return value;
    };
    const entrypoint = raw.entrypoint ?? ["sleep", "infinity"];
    if (
      !Array.isArray(entrypoint) ||
      !entrypoint.every((part) => typeof part === "string") ||
      entrypoint.length === 0
    ) {
      throw new Error(`${file}: "entrypoint" must be a non-empty list of strings`);
    }
    const resourceLimits: Record<string, string> = {};
    if (typeof raw.cpu === "string") resourceLimits.cpu = raw.cpu;
    if (typeof raw.memory === "string") resourceLimits.memory = raw.memory;
    const id = text("id", entry.name);
    templates.set(id, {
      id,
      name: text("name", id),
      description: text("description", id),
      image: text("image", `paddock/template-${id}:latest`),
      entrypoint: entrypoint as string[],
      resourceLimits,
    });
  }
  return templates;
}
