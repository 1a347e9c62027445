import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { TestServer } from "@paddock/server/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  field,
  launchChromium,
  logIn,
  markPage,
  openPage,
  runInTerminal,
  screenshotOnFailure,
  sessionToken,
  signUp,
  startDashboardServer,
  stillSamePage,
  terminalRows,
  textOf,
} from "../support/dashboard.js";
import { userApi } from "../support/user.js";

/** How long what the page shows may take to change, on two busy cores. */
const settle = { timeout: 15_000, interval: 100 };

const maxUploadBytes = 2 ** 20;

/**
 * One account through the dashboard, as a person uses it: each test goes on from where the one
 * before left the page (same server, browser and account), so they run in order.
 */
describe("the dashboard, one account from sign-up to a killed sandbox", () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  const email = "dashboard-user@example.com";
  let sandboxId = "";
  const secretValue = `s3cret-${randomBytes(6).toString("hex")}`;

  const nav = (name: string) => page.getByRole("navigation").getByRole("link", { name }).click();
  const heading = (name: string) => page.getByRole("heading", { name, level: 1 });
  const token = () => sessionToken(context);

  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startDashboardServer({ server: { max_upload_bytes: maxUploadBytes } }),
      launchChromium(),
    ]);
    ({ context, page, problems } = await openPage(browser));
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: t.url });
  });
  afterEach(async ({ task }) => {
    await screenshotOnFailure(page, task);
    // No uncaught error and no CSP refusal on the page, whatever the test looked at.
    expect(problems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.dispose();
  });

  test("sign up, log out, a wrong password keeps the email and says so, then log in", async () => {
    await page.goto(t.url);
    await heading("Log in to Paddock").waitFor();
    await page.getByRole("link", { name: "Create an account" }).click();
    await signUp(page, email);
    await page.getByText("No sandboxes yet").waitFor();

    await page.getByRole("button", { name: "Account" }).click();
    await page.getByRole("menuitem", { name: "Log out" }).click();
    await heading("Log in to Paddock").waitFor();

    await logIn(page, email, "not the password");
    const alert = page.getByRole("alert");
    await expect.poll(() => textOf(alert), settle).toMatch(/Wrong email or password/);
    expect(await field(page, "Email").inputValue()).toBe(email);
    expect(await field(page, "Password").inputValue()).toBe("");
    expect(await heading("Log in to Paddock").isVisible()).toBe(true);

    await logIn(page, email);
    await heading("Sandboxes").waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
  });

  test("API keys: a scoped key's secret is shown once and works; rotate and delete take effect", async () => {
    await nav("API keys");
    await heading("API keys").waitFor();
    await page.getByText("No API keys yet").waitFor();

    await page.getByRole("button", { name: "Create key" }).click();
    const form = page.getByRole("dialog", { name: "Create an API key" });
    await field(form, "Name").fill("ci-runner");
    await form.getByRole("radio", { name: "Sandboxes only" }).check();
    await form.getByRole("button", { name: "Create key" }).click();

    const reveal = page.getByRole("dialog", { name: "Secret of ci-runner" });
    const secret = await field(reveal, "Secret").inputValue();
    expect(secret).toMatch(/^pk_\S{20,}$/);
    await reveal.getByRole("button", { name: "Copy secret" }).click();
    await reveal.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret);

    expect((await userApi(t, secret, "/sandboxes")).status).toBe(200);
    expect((await userApi(t, secret, "/keys")).status).toBe(403); // scoped to sandboxes

    await reveal.getByRole("button", { name: "Done" }).click();
    await reveal.waitFor({ state: "hidden" });
    const row = page.getByRole("row", { name: /ci-runner/ });
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells.slice(0, 3)).toEqual(["ci-runner", expect.stringMatching(/…$/), "sandboxes"]);
    const prefix = (cells[1] as string).replace("…", "");
    expect(secret.startsWith(prefix) && prefix.length < secret.length).toBe(true);
    expect(await page.content()).not.toContain(secret);

    await row.getByRole("button", { name: "Rotate ci-runner" }).click();
    await page
      .getByRole("dialog", { name: "Rotate ci-runner?" })
      .getByRole("button", { name: "Rotate" })
      .click();
    const rotated = await field(reveal, "Secret").inputValue();
    expect(rotated).toMatch(/^pk_/);
    expect(rotated).not.toBe(secret);
    expect((await userApi(t, secret, "/sandboxes")).status).toBe(401);
    expect((await userApi(t, rotated, "/sandboxes")).status).toBe(200);
    await reveal.getByRole("button", { name: "Done" }).click();

    await row.getByRole("button", { name: "Delete ci-runner" }).click();
    await page
      .getByRole("dialog", { name: "Delete ci-runner?" })
      .getByRole("button", { name: "Delete" })
      .click();
    await row.waitFor({ state: "detached" });
    await page.getByText("No API keys yet").waitFor();
    expect((await userApi(t, rotated, "/sandboxes")).status).toBe(401);
  });

  test("secrets: the value goes in and is never shown; memory: search highlights the matched word", async () => {
    await nav("Secrets");
    await heading("Secrets").waitFor();
    await field(page, "Name").fill("DATABASE_PASSWORD");
    await field(page, "Value").fill(secretValue);
    await page.getByRole("button", { name: "Save secret" }).click();
    await page.getByRole("row", { name: /DATABASE_PASSWORD/ }).waitFor();
    expect(await field(page, "Value").inputValue()).toBe("");
    expect(await page.content()).not.toContain(secretValue);
    await page.reload();
    await page.getByRole("row", { name: /DATABASE_PASSWORD/ }).waitFor();
    expect(await page.content()).not.toContain(secretValue);

    await nav("Memory");
    await heading("Memory").waitFor();
    const add = async (content: string, tag: string) => {
      await field(page, "Content").fill(content);
      await field(page, "Tags").fill(tag);
      await field(page, "Tags").press("Enter");
      await page.getByRole("button", { name: "Add entry" }).click();
      // The form empties once the entry is saved; then the entry is listed.
      await expect.poll(() => field(page, "Content").inputValue(), settle).toBe("");
      await page.getByText(content).waitFor();
    };
    await add("Restart the gateway after rotating the certificates.", "ops");
    await add("Lunch order: falafel wrap with extra tahini.", "food");

    await field(page, "Search").fill("gateway");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => textOf(page.getByRole("status")), settle).toBe("1 match, best first");
    expect(await page.locator("mark").allTextContents()).toEqual(["gateway"]);
    expect(await page.getByText("falafel").count()).toBe(0);
    await page.getByRole("button", { name: "Show all entries" }).click();
    await page.getByText("falafel", { exact: false }).waitFor();
  });

  test("create a sandbox from the page with a variable, a secret and a label; it reaches Running", async () => {
    await nav("Sandboxes");
    await page.getByRole("button", { name: "New sandbox" }).click();
    const form = page.getByRole("dialog", { name: "New sandbox" });
    await field(form, "Template").click();
    await page.getByRole("option", { name: "Python" }).click();
    await form.getByRole("button", { name: "Add variable" }).click();
    await field(form, "Environment variables: Name 1").fill("GREETING");
    await field(form, "Environment variables: Value 1").fill("hello from the dashboard");
    await field(form, "Secrets").click();
    await page.getByRole("option", { name: "DATABASE_PASSWORD" }).click();
    await form.getByRole("button", { name: "Add label" }).click();
    await field(form, "Metadata: Key 1").fill("team");
    await field(form, "Metadata: Value 1").fill("dashboard-e2e");
    await form.getByRole("button", { name: "Create sandbox" }).click();

    await page.waitForURL(/#\/sandboxes\/[^/]+$/);
    sandboxId = decodeURIComponent(new URL(page.url()).hash.split("/").pop() as string);
    await heading(sandboxId).waitFor();
    await expect.poll(() => textOf(page.getByTestId("sandbox-state")), { timeout: 90_000 }).toBe("Running");
    await page.getByText("team=dashboard-e2e").waitFor();
    const record = (await (await userApi(t, await token(), `/sandboxes/${sandboxId}`)).json()) as {
      template: string;
      metadata: Record<string, string>;
    };
    expect(record).toMatchObject({ template: "python", metadata: { team: "dashboard-e2e" } });
  });

  test("terminal: commands typed into it run in the sandbox, with its variables and secrets", async () => {
    await page.getByText("Connected", { exact: true }).waitFor({ timeout: 30_000 });
    await runInTerminal(page, "echo $((6*7))");
    await expect.poll(() => terminalRows(page), settle).toContain("42");
    await runInTerminal(page, "ls /");
    await expect
      .poll(async () => (await terminalRows(page)).join("\n"), settle)
      .toMatch(/\bbin\b[\s\S]*\busr\b/);
    await runInTerminal(page, 'echo "$GREETING"');
    await expect.poll(() => terminalRows(page), settle).toContain("hello from the dashboard");
    await runInTerminal(page, 'echo "$DATABASE_PASSWORD" | rev');
    await expect.poll(() => terminalRows(page), settle).toContain([...secretValue].reverse().join(""));
  });

  test("files: upload, list, download the same bytes, delete; a too-large upload is refused and changes nothing", async () => {
    await page.getByRole("tab", { name: "Files" }).click();
    await field(page, "Folder").fill("/tmp");
    await field(page, "Folder").press("Enter");
    await page.getByRole("table", { name: "Files in /tmp" }).waitFor();
    const upload = (name: string, buffer: Buffer) =>
      page
        .locator('input[type="file"]')
        .setInputFiles({ name, mimeType: "application/octet-stream", buffer });
    const row = (name: string) => page.locator(`tr[data-file="${name}"]`);
    const download = async (name: string) => {
      const [started] = await Promise.all([
        page.waitForEvent("download"),
        row(name)
          .getByRole("link", { name: `Download ${name}` })
          .click(),
      ]);
      expect(started.suggestedFilename()).toBe(name);
      return readFile(await started.path());
    };

    const bytes = randomBytes(3000);
    await upload("data.bin", bytes);
    await row("data.bin").waitFor();
    expect(await row("data.bin").getByRole("cell").nth(1).textContent()).toBe("2.9 KiB");
    expect((await download("data.bin")).equals(bytes)).toBe(true);

    await row("data.bin").getByRole("button", { name: "Delete data.bin" }).click();
    await page
      .getByRole("dialog", { name: "Delete /tmp/data.bin?" })
      .getByRole("button", { name: "Delete" })
      .click();
    await row("data.bin").waitFor({ state: "detached" });

    await upload("keep.txt", Buffer.from("the old content\n"));
    await row("keep.txt").waitFor();
    await upload("keep.txt", Buffer.alloc(2 * maxUploadBytes, "x"));
    const refusal = page.getByRole("alert").filter({ hasText: "Upload failed" });
    await expect
      .poll(() => textOf(refusal), settle)
      .toMatch(/larger than this server's limit of 1048576 bytes/);
    expect((await download("keep.txt")).toString()).toBe("the old content\n");
    expect(await row("keep.txt").getByRole("cell").nth(1).textContent()).toBe("16 B");

    // An upload shows its progress and can be cancelled half-way, which leaves the old file. The
    // browser's uplink is slowed to 128 KiB/s so that the upload lasts a few seconds.
    const network = await page.context().newCDPSession(page);
    await network.send("Network.enable");
    const uplink = (uploadThroughput: number) =>
      network.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput,
      });
    await uplink(128 * 1024);
    await upload("keep.txt", Buffer.alloc(maxUploadBytes, "y"));
    const progress = page.getByRole("status").filter({ hasText: "Uploading keep.txt" });
    await expect
      .poll(() => textOf(progress), settle)
      .toMatch(/^Uploading keep\.txt: [1-9][\d.]* KiB of 1\.0 MiB$/);
    expect(await page.getByRole("progressbar", { name: "Upload of keep.txt" }).count()).toBe(1);
    await page.getByRole("button", { name: "Cancel upload" }).click();
    await page.getByText("Upload of keep.txt cancelled; nothing was written").waitFor({ timeout: 10_000 });
    await uplink(-1);
    expect(await progress.count()).toBe(0);
    expect(await page.getByRole("alert").filter({ hasText: "Upload failed" }).count()).toBe(0);
    expect((await download("keep.txt")).toString()).toBe("the old content\n");
    await network.detach();
  });

  test("metrics show live CPU and memory; diagnostics show the sandbox's events", async () => {
    await page.getByRole("tab", { name: "Terminal" }).click();
    await runInTerminal(page, "timeout 12 sh -c 'while :; do :; done' &");
    await page.getByRole("tab", { name: "Metrics" }).click();
    const cpu = page.getByTestId("cpu-now");
    const memory = page.getByTestId("memory-now");
    await expect.poll(() => textOf(cpu), { timeout: 15_000 }).toMatch(/^\d+\.\d % of 1 CPU$/);
    const [used = 0, total = 0] = ((await textOf(memory)).match(/\d+/g) ?? []).map(Number);
    expect(used).toBeGreaterThan(0);
    expect(total).toBeGreaterThanOrEqual(used);
    // The busy loop started in the terminal shows up within a few samples, against the template's
    // one CPU (not the two CPUs gVisor shows inside, on which it read 50 % at most).
    await expect
      .poll(async () => Number.parseFloat(await textOf(cpu)), { timeout: 15_000, interval: 200 })
      .toBeGreaterThan(50);

    await page.getByRole("tab", { name: "Diagnostics" }).click();
    const events = page.getByTestId("diagnostics-events");
    // The lifecycle log, then the container's state in the engine now.
    await expect.poll(() => textOf(events), { timeout: 15_000 }).toMatch(/runtime container running\s*$/);
    await page.getByText("Logs", { exact: true }).click();
    await expect.poll(() => textOf(page.getByTestId("diagnostics-logs")), settle).toMatch(/\S/);
    expect(await page.getByRole("alert").filter({ hasText: "Could not read" }).count()).toBe(0);
  });

  test("the Sandboxes list follows a pause and a resume made elsewhere, without a reload", async () => {
    await nav("Sandboxes");
    const state = page.locator(`tr[data-sandbox-id="${sandboxId}"]`).getByTestId("sandbox-state");
    await expect.poll(() => textOf(state), settle).toBe("Running");
    await markPage(page);

    expect(
      (await userApi(t, await token(), `/sandboxes/${sandboxId}/pause`, { method: "POST" })).status,
    ).toBe(200);
    await expect.poll(() => textOf(state), { timeout: 20_000 }).toBe("Paused (memory)");
    expect(
      (await userApi(t, await token(), `/sandboxes/${sandboxId}/resume`, { method: "POST" })).status,
    ).toBe(200);
    await expect.poll(() => textOf(state), { timeout: 20_000 }).toBe("Running");
    expect(await stillSamePage(page)).toBe(true);
  });

  test("usage: the minutes grow while the page is watched, and the running sandbox is listed", async () => {
    await nav("Usage");
    await heading("Usage").waitFor();
    await markPage(page);
    const used = page.getByText("Used", { exact: true }).locator("xpath=following-sibling::*[1]");
    const first = await textOf(used);
    expect(first).toMatch(/^\d+\.\d+ min$/);
    const row = page.getByRole("row", { name: new RegExp(sandboxId) });
    expect(await row.getByRole("cell").allTextContents()).toEqual([
      sandboxId,
      "python",
      "Running",
      expect.stringMatching(/^\d+\.\d+$/),
      "Yes, counting",
    ]);
    // GET /usage is asked again every 10 s while the page is open.
    await expect.poll(() => textOf(used), { timeout: 25_000, interval: 500 }).not.toBe(first);
    expect(Number.parseFloat(await textOf(used))).toBeGreaterThan(Number.parseFloat(first));
    expect(await stillSamePage(page)).toBe(true);
  });

  test("a sandbox killed elsewhere while its page is open shows Terminated and keeps the terminal's output", async () => {
    await page.getByRole("link", { name: sandboxId }).click();
    await heading(sandboxId).waitFor();
    await page.getByText("Connected", { exact: true }).waitFor({ timeout: 30_000 });
    await runInTerminal(page, "echo before-the-$((1+1))-kill");
    await expect.poll(() => terminalRows(page), settle).toContain("before-the-2-kill");

    expect((await userApi(t, await token(), `/sandboxes/${sandboxId}`, { method: "DELETE" })).status).toBe(
      204,
    );
    await expect
      .poll(() => textOf(page.getByTestId("sandbox-state")), { timeout: 30_000 })
      .toBe("Terminated");
    await page.getByRole("alert").filter({ hasText: "This sandbox is Terminated" }).waitFor();
    expect(await terminalRows(page)).toContain("before-the-2-kill");
  });
});
