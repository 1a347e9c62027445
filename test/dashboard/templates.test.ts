import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { TestServer } from "@paddock/server/testing";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  field,
  launchChromium,
  logIn,
  openPage,
  screenshotOnFailure,
  seriousViolations,
  sessionToken,
  signUp,
  startDashboardServer,
  textOf,
  type Violation,
} from "../support/dashboard.js";
import { userApi } from "../support/user.js";

/** How long what the page shows may take to change, on two busy cores. */
const settle = { timeout: 15_000, interval: 100 };
/** A build runs each RUN in a sandbox of its own and commits an image per step: give it time. */
const building = { timeout: 180_000, interval: 250 };

/** A .tar.gz made by the system's tar, holding an executable script in a folder. */
async function toolsArchive(): Promise<Buffer> {
  const folder = await mkdtemp(join(tmpdir(), "paddock-dashboard-tools-"));
  try {
    await mkdir(join(folder, "tools"));
    await writeFile(join(folder, "tools", "run.sh"), "#!/bin/sh\necho tool-from-the-archive\n");
    await chmod(join(folder, "tools", "run.sh"), 0o755);
    await promisify(execFile)("tar", ["-czf", join(folder, "tools.tar.gz"), "-C", folder, "tools"]);
    return await readFile(join(folder, "tools.tar.gz"));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * The account's own templates through the dashboard: a build from a Dockerfile and files packed
 * in the browser, its log followed live, a sandbox from it, deleting it (refused while in use),
 * a failing build and a cancelled one. Each test goes on from the last.
 */
describe("the dashboard: templates", () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let sandboxId = "";

  const heading = (name: string) => page.getByRole("heading", { name, level: 1 });
  const nav = (name: string) => page.getByRole("navigation").getByRole("link", { name }).click();
  const buildLog = () => page.getByRole("log", { name: "Build log" });
  const buildStatus = () => textOf(page.getByRole("region", { name: /^Build / }).getByTestId("build-status"));
  const api = async (path: string, init: Parameters<typeof userApi>[3] = {}) =>
    userApi(t, await sessionToken(context), path, init);

  /** Opens the New build form from the Templates page and fills it in. */
  const fillNewBuild = async (name: string, dockerfile: string): Promise<Locator> => {
    await nav("Templates");
    await heading("Templates").waitFor();
    await page.getByRole("button", { name: "New build" }).click();
    const form = page.getByRole("dialog", { name: "New build" });
    await field(form, "Template name").fill(name);
    await field(form, "Dockerfile").fill(dockerfile);
    return form;
  };

  beforeAll(async () => {
    [t, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
    ({ context, page, problems } = await openPage(browser));
    await signUp(page, "builder@example.com", t.url);
  });
  afterEach(async ({ task }) => {
    await screenshotOnFailure(page, task);
    expect(problems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    // The templates left (a failed and a cancelled build) go with their images from the engine.
    if (context && t) {
      const left = (await (await api("/templates")).json()) as { items: { name: string }[] };
      for (const { name } of left.items) await api(`/templates/${name}`, { method: "DELETE" });
    }
    await browser?.close();
    await t?.dispose();
  });

  test("a Dockerfile and files chosen on the page build; the log streams live and the build turns ready", async () => {
    await nav("Templates");
    await page.getByText("No templates of your own yet").waitFor();
    const form = await fillNewBuild(
      "greeter",
      [
        "FROM ubuntu",
        "COPY greeting.txt /srv/",
        "COPY tools /srv/tools",
        // The pause after the line keeps the build running while the page is expected to show it.
        "RUN echo hello-from-build && sleep 6",
      ].join("\n"),
    );
    await form.locator('input[type="file"]').setInputFiles([
      { name: "greeting.txt", mimeType: "text/plain", buffer: Buffer.from("hello from a chosen file\n") },
      { name: "tools.tar.gz", mimeType: "application/gzip", buffer: await toolsArchive() },
    ]);
    await form.getByRole("button", { name: "Build" }).click();

    await page.waitForURL(/#\/templates\/greeter\?build=bld-/);
    await heading("greeter").waitFor();
    // The RUN's output is on the page while the build still runs: streamed, not read afterwards.
    await expect.poll(() => textOf(buildLog()), building).toContain("hello-from-build");
    expect(await buildStatus()).toBe("building");
    await page.getByRole("button", { name: "Cancel build" }).waitFor();

    await expect.poll(() => buildStatus(), building).toBe("ready");
    const log = await textOf(buildLog());
    expect(log).toMatch(/step 1\/3 \(Dockerfile line 2\): COPY greeting\.txt/);
    expect(log).toMatch(/step 3\/3 \(Dockerfile line 4\): RUN echo hello-from-build/);
    expect(log).toMatch(/built \S+, \d+ MB/);
    expect(await page.getByRole("button", { name: "Cancel build" }).count()).toBe(0);

    // Afterwards the log is read whole again.
    await page.reload();
    await expect.poll(() => textOf(buildLog()), settle).toMatch(/hello-from-build[\s\S]*built \S+, \d+ MB/);
    await nav("Templates");
    const row = page.locator('tr[data-template="greeter"]');
    await expect.poll(() => textOf(row.getByTestId("build-status")), settle).toBe("ready");
    expect(await row.getByRole("cell").nth(2).textContent()).toMatch(/^\d+(\.\d)? MiB$/);
  });

  test("another account sees none of it: not listed, not in its create form, its page a 404", async () => {
    const bob = await openPage(browser);
    try {
      const other = bob.page;
      await signUp(other, "bob-templates@example.com", t.url);
      await other.getByRole("navigation").getByRole("link", { name: "Templates" }).click();
      await other.getByText("No templates of your own yet").waitFor();
      await other.goto(`${t.url}/#/templates/greeter`);
      const refusal = other.getByRole("alert").filter({ hasText: "Could not read the template" });
      await expect.poll(() => textOf(refusal), settle).toMatch(/no template greeter/);
      expect(await other.getByRole("log").count()).toBe(0);

      await other.getByRole("navigation").getByRole("link", { name: "Sandboxes" }).click();
      await other.getByRole("button", { name: "New sandbox" }).click();
      await field(other.getByRole("dialog", { name: "New sandbox" }), "Template").click();
      await other.getByRole("option", { name: "Python" }).waitFor();
      expect(await other.getByRole("option", { name: "greeter" }).count()).toBe(0);
      expect(bob.problems).toEqual([]);
    } finally {
      await bob.context.close();
    }
  });

  test("axe-core finds nothing serious or critical on the Templates page, the New build form and a build's page", async () => {
    // Only this context may inject axe's script past the page's CSP; reduced motion, so nothing
    // is judged mid-fade.
    const checked = await openPage(browser, {
      bypassCSP: true,
      colorScheme: "light",
      reducedMotion: "reduce",
    });
    try {
      const on = checked.page;
      await on.goto(t.url);
      await logIn(on, "builder@example.com");
      await on.getByRole("navigation").getByRole("link", { name: "Templates" }).click();
      await on.locator('tr[data-template="greeter"]').getByTestId("build-status").waitFor();
      const found: Record<string, Violation[]> = { templates: await seriousViolations(on) };
      await on.getByRole("button", { name: "New build" }).click();
      await on.getByRole("dialog", { name: "New build" }).waitFor();
      found.newBuild = await seriousViolations(on);
      await on.keyboard.press("Escape");
      await on.getByRole("link", { name: "greeter" }).click();
      await expect.poll(() => textOf(on.getByRole("log", { name: "Build log" })), settle).toMatch(/built /);
      found.template = await seriousViolations(on);
      expect(found).toEqual({ templates: [], newBuild: [], template: [] });
    } finally {
      await checked.context.close();
    }
  });

  test("the create form lists the template among the account's own; a sandbox starts from it with the chosen files", async () => {
    await nav("Sandboxes");
    await page.getByRole("button", { name: "New sandbox" }).click();
    const form = page.getByRole("dialog", { name: "New sandbox" });
    await field(form, "Template").click();
    const own = page.getByRole("group", { name: "Your templates" });
    await own.getByRole("option", { name: "greeter" }).click();
    await form.getByRole("button", { name: "Create sandbox" }).click();

    await page.waitForURL(/#\/sandboxes\/[^/]+$/);
    sandboxId = decodeURIComponent(new URL(page.url()).hash.split("/").pop() as string);
    await expect.poll(() => textOf(page.getByTestId("sandbox-state")), { timeout: 90_000 }).toBe("Running");
    const record = (await (await api(`/sandboxes/${sandboxId}`)).json()) as { template: string };
    expect(record.template).toBe("greeter");
    const run = await api(`/sandboxes/${sandboxId}/run`, {
      method: "POST",
      json: { command: "cat /srv/greeting.txt && /srv/tools/run.sh" },
    });
    expect(((await run.json()) as { stdout: string }).stdout).toBe(
      "hello from a chosen file\ntool-from-the-archive\n",
    );
  });

  test("deleting the template is refused while the sandbox runs, and says why; after a kill it goes", async () => {
    const deleteTemplate = async () => {
      await page.getByRole("button", { name: "Delete template" }).click();
      await page
        .getByRole("dialog", { name: "Delete greeter?" })
        .getByRole("button", { name: "Delete" })
        .click();
    };
    await nav("Templates");
    await page.getByRole("link", { name: "greeter" }).click();
    await heading("greeter").waitFor();
    await deleteTemplate();
    const refusal = page.getByRole("alert").filter({ hasText: "greeter is in use" });
    await expect
      .poll(() => textOf(refusal), settle)
      .toMatch(/sandbox\(es\) were started from template greeter/);
    expect((await api("/templates/greeter")).status).toBe(200);

    await nav("Sandboxes");
    await page.getByRole("link", { name: sandboxId }).click();
    await page.getByRole("button", { name: "Kill" }).click();
    await page
      .getByRole("dialog", { name: `Kill ${sandboxId}?` })
      .getByRole("button", { name: "Kill" })
      .click();
    await expect
      .poll(() => textOf(page.getByTestId("sandbox-state")), { timeout: 60_000 })
      .toBe("Terminated");

    await nav("Templates");
    await page.getByRole("link", { name: "greeter" }).click();
    await deleteTemplate();
    await heading("Templates").waitFor();
    await page.getByText("No templates of your own yet").waitFor();
    expect((await api("/templates/greeter")).status).toBe(404);
  });

  test("a failing Dockerfile shows its error with the line it is on", async () => {
    // Refused before it starts: the answer names the line.
    let form = await fillNewBuild("broken", "FROM ubuntu\nONBUILD RUN true");
    await form.getByRole("button", { name: "Build" }).click();
    const refusal = form.getByRole("alert").filter({ hasText: "Could not start the build" });
    await expect.poll(() => textOf(refusal), settle).toMatch(/Dockerfile line 2: ONBUILD/);
    await page.keyboard.press("Escape");

    // A RUN that fails: the build ends in error, and says at which step and line.
    form = await fillNewBuild("broken", "FROM ubuntu\nRUN echo before-the-failure\nRUN exit 3");
    await form.getByRole("button", { name: "Build" }).click();
    await heading("broken").waitFor();
    await expect.poll(() => buildStatus(), building).toBe("error");
    const failure = page.getByRole("alert").filter({ hasText: "The build failed" });
    expect(await textOf(failure)).toMatch(/step 2\/2 \(Dockerfile line 3\) RUN exit 3/);
    expect(await textOf(buildLog())).toMatch(/before-the-failure[\s\S]*Dockerfile line 3/);
  });

  test("a running build is cancelled from its page", async () => {
    const form = await fillNewBuild("slow", "FROM ubuntu\nRUN echo started-slowly && sleep 120");
    await form.getByRole("button", { name: "Build" }).click();
    await heading("slow").waitFor();
    await expect.poll(() => textOf(buildLog()), building).toContain("started-slowly");
    await page.getByRole("button", { name: "Cancel build" }).click();
    await expect.poll(() => buildStatus(), { timeout: 60_000, interval: 250 }).toBe("cancelled");
    const builds = (await (await api("/templates/slow")).json()) as { builds: { status: string }[] };
    expect(builds.builds.map((build) => build.status)).toEqual(["cancelled"]);
  });
});
