import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

const cli = join(import.meta.dirname, "../../packages/cli/dist/main.js");

/** Runs `paddock <args>` with a config file; the server must refuse before listening. */
function paddock(config: string, ...args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "paddock-cli-"));
  const file = join(dir, "paddock.toml");
  writeFileSync(file, `[server]\ndata_dir = "${dir}"\nport = 0\n${config}`);
  const result = spawnSync(process.execPath, [cli, ...args, "--config", file], {
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: process.env.PATH },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("paddock refuses to start when it cannot run safely", () => {
  test("without an API key, unless told to generate one or to run open", () => {
    const refused = paddock("", "runtime", "serve");
    expect(refused.status).toBe(1);
    expect(refused.output).toContain("no API key for the runtime API");
    expect(refused.output).toContain("--generate-key");
    expect(refused.output).not.toContain("    at "); // a message, not a stack trace
  });

  test("when the configured secure runtime is missing from the engine", () => {
    const kata = paddock('api_key = "k"\n[secure_runtime]\ntype = "kata"\n', "serve");
    expect(kata.status).toBe(1);
    expect(kata.output).toMatch(
      /secure_runtime.type = "kata" needs the Docker runtime "kata-runtime", but the engine offers: .*runsc/,
    );
    const renamed = paddock(
      'api_key = "k"\n[secure_runtime]\ntype = "gvisor"\ndocker_runtime = "gvisor-missing"\n',
      "serve",
    );
    expect(renamed.output).toContain('needs the Docker runtime "gvisor-missing"');
    const firecracker = paddock('api_key = "k"\n[secure_runtime]\ntype = "firecracker"\n', "serve");
    expect(firecracker.output).toContain('only with runtime.type = "kubernetes"');
  });

  test("on a configuration error, naming the key", () => {
    const typo = paddock('api_key = "k"\nprot = 8080\n', "serve");
    expect(typo.status).toBe(1);
    expect(typo.output).toContain("unknown key server.prot");
  });

  test("usage on unknown commands", () => {
    const usage = spawnSync(process.execPath, [cli, "launch"], { encoding: "utf8" });
    expect(usage.status).toBe(2);
    expect(usage.stdout).toContain("paddock runtime serve");
  });
});
