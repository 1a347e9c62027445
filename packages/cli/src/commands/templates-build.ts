import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { PaddockConfig } from "@paddock/common";
import { buildTemplates, loadTemplates, type TemplateBuildEvent } from "@paddock/runtime";
import Docker from "dockerode";

/** `paddock templates build [ID...] [--force] [--base IMAGE]`: a line per build step, a summary per template. */
export async function buildTemplatesCommand(
  config: PaddockConfig,
  ids: string[],
  options: { force: boolean; baseImage: string },
): Promise<number> {
  const templates = loadTemplates(resolve(config.templates.dir));
  await buildTemplates({
    docker: new Docker({ socketPath: config.docker.socket_path }),
    templates,
    only: ids,
    force: options.force,
    baseImage: options.baseImage,
    npmRegistry: npmRegistry(),
    caBundle: caBundle(),
    onEvent: (event) => console.log(describe(event)),
  });
  return 0;
}

function describe(event: TemplateBuildEvent): string {
  const label = `[${event.template}]`;
  switch (event.kind) {
    case "current":
      return `${label} current, skipped`;
    case "step": {
      const instruction = event.instruction.replace(/\s+/g, " ");
      return `${label} step ${event.step}/${event.steps}: ${instruction.length > 100 ? `${instruction.slice(0, 99)}…` : instruction}`;
    }
    case "built":
      return `${label} built in ${event.seconds.toFixed(1)} s, ${(event.bytes / 1e6).toFixed(0)} MB`;
  }
}

/** The registry this host's npm uses, so builds fetch from the same place. */
function npmRegistry(): string {
  try {
    return execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim();
  } catch {
    return "https://registry.npmjs.org/";
  }
}

/** The CA bundle this host trusts (a TLS-inspecting proxy's CA included), which builds verify the registry with. */
function caBundle(): string {
  for (const candidate of [
    process.env.PADDOCK_BUILD_CA_BUNDLE,
    process.env.NODE_EXTRA_CA_CERTS,
    "/etc/ssl/certs/ca-certificates.crt",
  ]) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  throw new Error("no CA bundle found; set PADDOCK_BUILD_CA_BUNDLE to a PEM file");
}
