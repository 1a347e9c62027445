import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { probe } from "../src/readiness.js";
import { openTestStack, type TestStack, testDocker, testImage } from "../src/testing/index.js";

/**
 * A real registry (Debian's docker-registry) on loopback with basic auth stands in for a
 * private registry: creates pull from it with credentials, and only when the image is absent.
 */
describe("create from a private registry", () => {
  const dir = mkdtempSync(join(tmpdir(), "paddock-registry-"));
  const port = 15000 + Math.floor(Math.random() * 2000);
  const host = `127.0.0.1:${port}`;
  const image = `${host}/paddock/private:${Date.now()}`;
  const auth = { username: "builder", password: "s3cret-pass" };
  let registry: ChildProcess;
  let t: TestStack;

  beforeAll(async () => {
    writeFileSync(join(dir, "htpasswd"), execFileSync("htpasswd", ["-Bbn", auth.username, auth.password]));
    writeFileSync(
      join(dir, "config.yml"),
      [
        "version: 0.1",
        "storage:",
        `  filesystem: { rootdirectory: ${join(dir, "data")} }`,
        `http: { addr: "${host}" }`,
        `auth: { htpasswd: { realm: paddock-test, path: ${join(dir, "htpasswd")} } }`,
        "",
      ].join("\n"),
    );
    registry = spawn("docker-registry", ["serve", join(dir, "config.yml")], { stdio: "ignore" });
    await vi.waitFor(async () => expect(await probe(`http://${host}/v2/`)).toBe(401), { timeout: 20_000 });
    await testDocker
      .getImage(testImage)
      .tag({ repo: image.slice(0, image.lastIndexOf(":")), tag: image.split(":").pop() });
    const push = await testDocker.getImage(image).push({ authconfig: { ...auth, serveraddress: host } });
    await new Promise((resolve, reject) =>
      testDocker.modem.followProgress(push, (error, output) => {
        const failed = (output as Array<{ error?: string }>).find((line) => line.error);
        if (error || failed) reject(error ?? new Error(failed?.error));
        else resolve(output);
      }),
    );
    await testDocker.getImage(image).remove();
    t = await openTestStack({ secure: "gvisor" });
  });

  afterAll(async () => {
    await t?.dispose();
    await testDocker
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
    registry?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test("refuses missing or wrong credentials with registry_auth_failed", async () => {
    const entrypoint = ["sleep", "infinity"];
    await expect(t.stack.sandboxes.create({ image: { uri: image }, entrypoint })).rejects.toMatchObject({
      code: "registry_auth_failed",
      status: 400,
    });
    await expect(
      t.stack.sandboxes.create({ image: { uri: image, auth: { ...auth, password: "wrong" } }, entrypoint }),
    ).rejects.toMatchObject({ code: "registry_auth_failed" });
  });

  test("pulls with credentials when absent, then reuses the local image", async () => {
    const entrypoint = ["sleep", "infinity"];
    const first = await t.stack.sandboxes.create({ image: { uri: image, auth }, entrypoint });
    expect(first.status.state).toBe("Running");
    expect(first.image).toEqual({ uri: image });
    // With the registry gone, a second create still works: nothing is pulled when present.
    registry.kill();
    await expect.poll(() => probe(`http://${host}/v2/`)).toBeUndefined();
    const second = await t.stack.sandboxes.create({ image: { uri: image }, entrypoint });
    expect(second.status.state).toBe("Running");
  });
});
