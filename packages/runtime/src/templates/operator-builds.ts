import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type Docker from "dockerode";
import type { BuiltInTemplate } from "./manifests.js";

/** Image label holding the hash of everything a template's image was built from. */
const templateHashLabel = "paddock.template.hash";

export interface TemplateBuildOptions {
  docker: Docker;
  templates: Map<string, BuiltInTemplate>;
  /** Templates to build (their bases come along); all of them when empty. */
  only?: string[];
  /** Rebuild the named templates even when their images are current. */
  force?: boolean;
  /** The image templates without a `base` are built FROM. */
  baseImage: string;
  /** The npm registry builds fetch from. */
  npmRegistry: string;
  /** CA bundle that TLS to the registry verifies with (copied into a fetch stage, never into the image). */
  caBundle: string;
  onEvent: (event: TemplateBuildEvent) => void;
}

export type TemplateBuildEvent =
  | { template: string; kind: "current" }
  | { template: string; kind: "step"; step: number; steps: number; instruction: string }
  | { template: string; kind: "built"; seconds: number; bytes: number };

export class TemplateBuildError extends Error {
  override name = "TemplateBuildError";
}

/**
 * Builds template images in dependency order (a template's `base` first). An image is current when
 * its hash label matches the hash of the template's files, build arguments and base image, so an
 * unchanged template is skipped in one inspect; `force` rebuilds the named ones regardless.
 */
export async function buildTemplates(options: TemplateBuildOptions): Promise<void> {
  const { templates } = options;
  const forced = new Set(options.force ? (options.only?.length ? options.only : [...templates.keys()]) : []);
  for (const template of buildOrder(templates, options.only)) {
    if (!existsSync(join(template.dir, "Dockerfile")))
      throw new TemplateBuildError(`template ${template.id} has no Dockerfile in ${template.dir}`);
    const baseImage = (template.base && templates.get(template.base)?.image) || options.baseImage;
    const args = buildArgs(template, { BASE_IMAGE: baseImage, NPM_REGISTRY: options.npmRegistry });
    // A base not here yet (a registry image on a connected machine) is pulled by the build itself.
    const baseId = await options.docker
      .getImage(baseImage)
      .inspect()
      .then((image) => image.Id)
      .catch(() => baseImage);
    const files = contextFiles(template.dir);
    const hash = contentHash(template, files, args, baseId);
    const existing = await options.docker
      .getImage(template.image)
      .inspect()
      .catch(() => undefined);
    if (!forced.has(template.id) && existing?.Config?.Labels?.[templateHashLabel] === hash) {
      options.onEvent({ template: template.id, kind: "current" });
      continue;
    }
    mkdirSync(join(template.dir, ".build"), { recursive: true });
    copyFileSync(options.caBundle, join(template.dir, ".build", "ca-certificates.crt"));
    const started = Date.now();
    await runBuild(options.docker, template, files, args, hash, options.onEvent);
    const built = await options.docker.getImage(template.image).inspect();
    options.onEvent({
      template: template.id,
      kind: "built",
      seconds: (Date.now() - started) / 1000,
      bytes: built.Size,
    });
  }
}

/** The templates to build, each after its base, limited to `only` and the bases they need. */
function buildOrder(templates: Map<string, BuiltInTemplate>, only?: string[]): BuiltInTemplate[] {
  const ordered: BuiltInTemplate[] = [];
  const visit = (id: string, path: string[]) => {
    if (ordered.some((template) => template.id === id)) return;
    if (path.includes(id))
      throw new TemplateBuildError(`templates ${[...path, id].join(" -> ")} form a cycle`);
    const template = templates.get(id);
    if (!template) {
      throw new TemplateBuildError(
        `no template ${id}; the templates are: ${[...templates.keys()].join(", ")}`,
      );
    }
    if (template.base) visit(template.base, [...path, id]);
    ordered.push(template);
  };
  for (const id of only?.length ? only : [...templates.keys()]) visit(id, []);
  return ordered;
}

/** Build arguments the Dockerfile declares, from the manifest and the host. */
function buildArgs(template: BuiltInTemplate, host: Record<string, string>): Record<string, string> {
  const available: Record<string, string> = {
    ...host,
    NPM_PACKAGES: Object.entries(template.npm)
      .map(([name, version]) => `${name}@${version}`)
      .join(" "),
  };
  const dockerfile = readFileSync(join(template.dir, "Dockerfile"), "utf8");
  const declared = new Set([...dockerfile.matchAll(/^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)/gm)].map((m) => m[1]));
  return Object.fromEntries(Object.entries(available).filter(([name]) => declared.has(name)));
}

/** Files of the build context: the template's directory, less local caches. */
function contextFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        if (![".build", ".cache"].includes(entry.name)) walk(full);
      } else files.push(relative(dir, full));
    }
  };
  walk(dir);
  return files.sort();
}

function contentHash(
  template: BuiltInTemplate,
  files: string[],
  args: Record<string, string>,
  baseId: string,
): string {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ args, baseId, image: template.image }));
  for (const file of files) {
    hash.update(`\0${file}\0`);
    hash.update(readFileSync(join(template.dir, file)));
  }
  return hash.digest("hex").slice(0, 32);
}

interface BuildMessage {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

async function runBuild(
  docker: Docker,
  template: BuiltInTemplate,
  files: string[],
  args: Record<string, string>,
  hash: string,
  onEvent: TemplateBuildOptions["onEvent"],
): Promise<void> {
  const src = [...files, ".build/ca-certificates.crt"];
  const stream = await docker.buildImage(
    { context: template.dir, src },
    // version "1": the classic builder, which every engine here has (BuildKit needs buildx).
    {
      t: template.image,
      buildargs: args,
      labels: { [templateHashLabel]: hash },
      rm: true,
      forcerm: true,
      version: "1",
    },
  );
  // The last lines of output, to explain a failed step.
  const tail: string[] = [];
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null, messages: BuildMessage[]) => {
        const failed = error?.message ?? messages.find((message) => message.error)?.error;
        if (!failed) return resolve();
        reject(
          new TemplateBuildError(`template ${template.id} failed to build: ${failed}\n${tail.join("\n")}`),
        );
      },
      (message: BuildMessage) => {
        for (const line of (message.stream ?? "").split("\n")) {
          const step = /^Step (\d+)\/(\d+) : (.*)$/.exec(line);
          if (step) {
            onEvent({
              template: template.id,
              kind: "step",
              step: Number(step[1]),
              steps: Number(step[2]),
              instruction: step[3] as string,
            });
          } else if (line.trim()) {
            tail.push(line);
            if (tail.length > 30) tail.shift();
          }
        }
      },
    );
  });
}
