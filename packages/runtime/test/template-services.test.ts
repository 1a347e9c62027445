import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { probe } from "../src/readiness.js";
import { openTestStack, type TestStack } from "../src/testing/index.js";

const serverImage = "paddock/template-python:latest";

/** A template whose web server comes up `delay` seconds after its sandbox starts. */
function writeTemplate(dir: string, id: string, fields: string): void {
  mkdirSync(join(dir, id));
  writeFileSync(
    join(dir, id, "template.toml"),
    `id = "${id}"\nname = "${id}"\ndescription = "template services test"\n${fields}\n`,
  );
}

// A template's `ready` ports hold its sandbox in Pending until they answer, cold or warm, so a
// desktop's display or a browser's debugger is up the moment a create returns.
describe("template services", () => {
  let t: TestStack;
  const templatesDir = mkdtempSync(join(tmpdir(), "paddock-templates-"));
  const slowServer = (port: number) =>
    `image = "${serverImage}"\nentrypoint = ["sh", "-c", "sleep 3; exec python3 -m http.server ${port} --bind 0.0.0.0"]\n`;
  writeTemplate(
    templatesDir,
    "slow-web",
    `${slowServer(8080)}[[ports]]\nport = 8080\nname = "web"\ndescription = "a page"\nready = "/"\n`,
  );
  writeTemplate(
    templatesDir,
    "slow-web-warm",
    `${slowServer(8081)}[[ports]]\nport = 8081\nname = "web"\ndescription = "a page"\nready = "/"\n`,
  );
  writeTemplate(
    templatesDir,
    "never-ready",
    `image = "${serverImage}"\n[[ports]]\nport = 8082\nname = "web"\ndescription = "never served"\nready = "/"\n`,
  );
  writeTemplate(templatesDir, "unbuilt", `image = "paddock/template-never-built:latest"\n`);

  beforeAll(async () => {
    t = await openTestStack({
      secure: "gvisor",
      config: {
        templates: { dir: templatesDir },
        pools: { sizes: { "slow-web-warm": 1 }, max_total: 2, refill_concurrency: 1 },
        runtime: { create_timeout_seconds: 8 },
      },
    });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const answers = async (id: string, port: number) => {
    const { host } = await t.stack.sandboxes.target(id, port);
    return probe(`http://${host}:${port}/`);
  };

  test("a cold create returns once the ready port answers", async () => {
    const sandbox = await t.stack.sandboxes.create({ template: "slow-web" });
    expect(sandbox.status.state).toBe("Running");
    expect(await answers(sandbox.id, 8080)).toBe(200);
  });

  test("a warm sandbox is handed out with its service already answering", async () => {
    await expect.poll(() => t.stack.pools.readyCount("slow-web-warm"), { timeout: 60_000 }).toBe(1);
    const sandbox = await t.stack.sandboxes.create({ template: "slow-web-warm" });
    expect(sandbox.pooledFor).toBeUndefined();
    expect(await answers(sandbox.id, 8081)).toBe(200);
  });

  test("a service that never answers fails the create with template_not_ready and leaves nothing", async () => {
    // The pool refilled behind the previous test's claim: nothing else starts meanwhile.
    await expect.poll(() => t.stack.pools.readyCount("slow-web-warm"), { timeout: 60_000 }).toBe(1);
    const before = (await t.stack.runtime.listWorkloads()).length;
    await expect(t.stack.sandboxes.create({ template: "never-ready" })).rejects.toMatchObject({
      code: "template_not_ready",
      status: 503,
      message: expect.stringContaining("web (port 8082) did not answer GET /"),
    });
    expect((await t.stack.runtime.listWorkloads()).length).toBe(before);
    expect((await t.stack.sandboxes.list({})).items.every((s) => s.template !== "never-ready")).toBe(true);
  });

  test("a template whose image is not built answers 503 template_image_missing naming make templates", async () => {
    await expect(t.stack.sandboxes.create({ template: "unbuilt" })).rejects.toMatchObject({
      code: "template_image_missing",
      status: 503,
      message: expect.stringContaining("make templates"),
    });
  });

  test("an unknown template answers 404 template_not_found listing the ids", async () => {
    await expect(t.stack.sandboxes.create({ template: "nope" })).rejects.toMatchObject({
      code: "template_not_found",
      status: 404,
      message: "no template nope; the templates are: never-ready, slow-web, slow-web-warm, unbuilt",
    });
  });
});
