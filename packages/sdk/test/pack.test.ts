import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");

/** The README's first TypeScript example, aimed at `url`. */
function readmeExample(url: string): string {
  const example = /```ts\n([\s\S]*?)```/.exec(readFileSync(join(root, "README.md"), "utf8"))?.[1];
  if (!example) throw new Error("README.md has no ```ts example");
  return example.replaceAll("http://127.0.0.1:8080", url);
}

describe("the SDK as a user installs it: npm pack, then npm install of the tarball in an empty directory", () => {
  let t: TestServer;
  let project: string;

  beforeAll(async () => {
    t = await startTestServer();
    project = mkdtempSync(join(tmpdir(), "paddock-sdk-user-"));
    const packed = execFileSync("npm", ["pack", "--pack-destination", project, "--silent"], {
      cwd: join(root, "packages", "sdk"),
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .pop() as string;
    writeFileSync(
      join(project, "package.json"),
      '{ "name": "user-project", "type": "module", "private": true }\n',
    );
    // --offline: the tarball must need nothing from a registry.
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", join(project, packed)], {
      cwd: project,
      stdio: "pipe",
    });
  }, 120_000);
  afterAll(async () => {
    await t?.dispose();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  test("the package has no dependencies and ships one module plus its types", () => {
    const installed = JSON.parse(readFileSync(join(project, "node_modules/paddock/package.json"), "utf8"));
    expect(installed.dependencies ?? {}).toEqual({});
    const files = execFileSync("find", [".", "-type", "f"], {
      cwd: join(project, "node_modules/paddock"),
      encoding: "utf8",
    });
    expect(files).toContain("./dist/paddock.js");
    expect(files).not.toMatch(/\.\/src\//);
  });

  test("the README's example runs from there and prints 42", async () => {
    writeFileSync(join(project, "example.mjs"), readmeExample(t.url));
    // Asynchronously: the server answering it runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ["example.mjs"], {
      cwd: project,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(stdout.trim()).toBe("42");
  });

  test("its types check in a strict TypeScript project", () => {
    writeFileSync(
      join(project, "example.ts"),
      readmeExample(t.url).replace("me@example.com", "typed@example.com"),
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "nodenext",
          target: "es2022",
          noEmit: true,
          types: [],
          lib: ["es2023", "dom"],
        },
        files: ["example.ts"],
      }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    expect(() =>
      execFileSync(process.execPath, [tsc, "-p", project], { encoding: "utf8", stdio: "pipe" }),
    ).not.toThrow();
  });
});
