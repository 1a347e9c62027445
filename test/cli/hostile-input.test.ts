import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const root = join(import.meta.dirname, "../..");
const apiKey = "hostile-input-test-key";

/** `paddock serve` from the sources, as its own process; resolves with its URL once it listens. */
function startPaddock(dataDir: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const config = join(dataDir, "paddock.toml");
  writeFileSync(
    config,
    `[server]\ndata_dir = "${dataDir}"\nhost = "127.0.0.1"\nport = 0\napi_key = "${apiKey}"\ninstance = "${newId("hostile")}"\n`,
  );
  const child = spawn(
    process.execPath,
    [
      "--conditions=@paddock/source",
      "--import",
      "tsx",
      "packages/cli/src/main.ts",
      "serve",
      "--config",
      config,
    ],
    { cwd: root, env: { PATH: process.env.PATH }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  return new Promise((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk;
      const url = /Paddock is listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) resolve({ child, url, output: () => output });
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("exit", (code) =>
      reject(new Error(`paddock exited with ${code} before listening:\n${output}`)),
    );
  });
}

describe("nothing a client sends ends the server process", () => {
  let dataDir: string;
  let paddock: Awaited<ReturnType<typeof startPaddock>>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "paddock-hostile-"));
    paddock = await startPaddock(dataDir);
  });
  afterAll(async () => {
    const child = paddock?.child;
    if (child && child.exitCode === null) {
      // A clean stop (the CLI closes the server on SIGTERM); a hard one if it hangs.
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("an image reference that walks up the engine's URL is refused, and the next request is answered", async () => {
    for (const uri of ["../../etc/passwd", "/images/x", "a/../../b", "x?y=1", "team/App"]) {
      const response = await fetch(`${paddock.url}/v1/sandboxes`, {
        method: "POST",
        headers: { "RUNTIME-API-KEY": apiKey, "content-type": "application/json" },
        body: JSON.stringify({ image: { uri }, entrypoint: ["sleep", "1"] }),
      });
      const answer = (await response.json()) as { code: string; message: string };
      expect([uri, response.status, answer.code]).toEqual([uri, 400, "invalid_image"]);
      expect(answer.message).toContain(uri);
    }
    // The process is still there and still serving.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(paddock.child.exitCode, paddock.output()).toBeNull();
    const health = await fetch(`${paddock.url}/health`);
    expect(health.status).toBe(200);
  });
});
