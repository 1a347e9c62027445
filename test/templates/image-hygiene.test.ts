import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { loadTemplates } from "@paddock/runtime";
import { describe, expect, test } from "vitest";

const templates = [...loadTemplates(resolve("templates")).values()];
const built = templates.filter((template) => {
  try {
    execFileSync("docker", ["image", "inspect", template.image], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
});

// What a layer must not keep: package lists, package and build caches, the build's CA bundle.
const leftovers = [
  "/var/lib/apt/lists/*_Packages*",
  "/var/cache/apt/*.bin",
  "/root/.npm/_cacache",
  "/root/.cache/node-gyp",
  "/root/.cache/pip",
  "/tmp/ca.crt",
  "/tmp/*.tgz",
];

describe("template images", () => {
  test("every template `make setup` builds is built", () => {
    expect(built.map((template) => template.id)).toEqual(
      expect.arrayContaining([
        "python",
        "node",
        "ubuntu",
        "code-interpreter",
        "e2b-base",
        "e2b-code-interpreter",
      ]),
    );
  });

  test.each(built.map((template) => [template.id, template.image]))(
    "%s keeps no package lists, caches or build files",
    (_id, image) => {
      const found = execFileSync(
        "docker",
        ["run", "--rm", "--entrypoint", "sh", image, "-c", `ls -d ${leftovers.join(" ")} 2>/dev/null; true`],
        { encoding: "utf8" },
      );
      expect(found).toBe("");
    },
  );
});
