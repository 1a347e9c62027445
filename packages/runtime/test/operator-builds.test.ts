import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, describe, expect, test } from "vitest";
import { loadTemplates } from "../src/templates/manifests.js";
import {
  buildTemplates,
  TemplateBuildError,
  type TemplateBuildEvent,
} from "../src/templates/operator-builds.js";
import { testImage } from "../src/testing/index.js";

const docker = new Docker();
const suffix = Date.now().toString(36);
const lower = `build-lower-${suffix}`;
const upper = `build-upper-${suffix}`;
const dir = mkdtempSync(join(tmpdir(), "paddock-template-builds-"));

function writeTemplate(id: string, manifest: string, dockerfile: string): void {
  mkdirSync(join(dir, id), { recursive: true });
  writeFileSync(
    join(dir, id, "template.toml"),
    `id = "${id}"\nname = "${id}"\ndescription = "build test"\n${manifest}`,
  );
  writeFileSync(join(dir, id, "Dockerfile"), dockerfile);
}

writeTemplate(
  lower,
  '[npm]\n"left-pad" = "1.3.0"\n"@scope/tool" = "2.0.1"\n',
  [
    "ARG BASE_IMAGE",
    "FROM ${BASE_IMAGE} AS fetch",
    "COPY .build/ca-certificates.crt /tmp/ca.crt",
    "RUN test -s /tmp/ca.crt",
    "FROM ${BASE_IMAGE}",
    "ARG NPM_PACKAGES",
    'RUN echo "$NPM_PACKAGES" > /pins',
    "",
  ].join("\n"),
);
writeTemplate(
  upper,
  `base = "${lower}"\n`,
  "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY hello.txt /hello.txt\n",
);
writeFileSync(join(dir, upper, "hello.txt"), "one\n");

const image = (id: string) => `paddock/template-${id}:latest`;
const inImage = (id: string, command: string) =>
  execFileSync("docker", ["run", "--rm", "--entrypoint", "sh", image(id), "-c", command], {
    encoding: "utf8",
  });

async function build(options: { only?: string[]; force?: boolean } = {}): Promise<TemplateBuildEvent[]> {
  const events: TemplateBuildEvent[] = [];
  await buildTemplates({
    docker,
    templates: loadTemplates(dir),
    ...options,
    baseImage: testImage,
    npmRegistry: "https://registry.npmjs.org/",
    caBundle: "/etc/ssl/certs/ca-certificates.crt",
    onEvent: (event) => events.push(event),
  });
  return events;
}
const outcome = (events: TemplateBuildEvent[]) =>
  events.filter((event) => event.kind !== "step").map((event) => `${event.template}:${event.kind}`);

describe("template builds", () => {
  afterAll(() => {
    for (const id of [upper, lower]) execFileSync("docker", ["rmi", "-f", image(id)]);
  });

  test("build bases first, report each step, pass the npm pins, and keep the CA bundle out of the image", async () => {
    const events = await build({ only: [upper] });
    expect(outcome(events)).toEqual([`${lower}:built`, `${upper}:built`]);
    const steps = events.filter((event) => event.kind === "step" && event.template === lower);
    expect(steps.map((event) => (event.kind === "step" ? `${event.step}/${event.steps}` : ""))).toEqual(
      steps.map((_, index) => `${index + 1}/${steps.length}`),
    );
    expect(inImage(lower, "cat /pins")).toBe("left-pad@1.3.0 @scope/tool@2.0.1\n");
    expect(inImage(upper, "cat /pins /hello.txt; ls /tmp | wc -l")).toBe(
      "left-pad@1.3.0 @scope/tool@2.0.1\none\n0\n",
    );
  });

  test("skip current images; a changed file rebuilds its template; a rebuilt base rebuilds what is built on it", async () => {
    expect(outcome(await build())).toEqual([`${lower}:current`, `${upper}:current`]);
    writeFileSync(join(dir, upper, "hello.txt"), "two\n");
    expect(outcome(await build())).toEqual([`${lower}:current`, `${upper}:built`]);
    expect(inImage(upper, "cat /hello.txt")).toBe("two\n");
    writeFileSync(
      join(dir, lower, "Dockerfile"),
      `ARG BASE_IMAGE\nFROM \${BASE_IMAGE}\nRUN echo changed > /pins\n`,
    );
    expect(outcome(await build())).toEqual([`${lower}:built`, `${upper}:built`]);
    expect(inImage(upper, "cat /pins")).toBe("changed\n");
    expect(outcome(await build({ only: [lower], force: true }))).toEqual([`${lower}:built`]);
  });

  test("a failing step and an unknown id are errors that say which and why", async () => {
    await expect(build({ only: ["nope"] })).rejects.toThrow(
      new TemplateBuildError(`no template nope; the templates are: ${[lower, upper].sort().join(", ")}`),
    );
    writeFileSync(
      join(dir, upper, "Dockerfile"),
      "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo about to fail && false\n",
    );
    const failure = build({ only: [upper] });
    await expect(failure).rejects.toBeInstanceOf(TemplateBuildError);
    await expect(failure).rejects.toThrow(
      /template build-upper-\w+ failed to build: The command .* returned a non-zero code: 1\n[\s\S]*about to fail/,
    );
  });
});
