import type { TestServer } from "@paddock/server/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  launchChromium,
  logIn,
  openPage,
  screenshotOnFailure,
  seriousViolations,
  sessionToken,
  signUp,
  startDashboardServer,
} from "../support/dashboard.js";
import { userApi } from "../support/user.js";

/** How long what the page shows may take to change, on two busy cores. */
const settle = { timeout: 15_000, interval: 100 };

/** The Audit log page: the account's events in a table, filtered by type, older ones a page at a time. */
describe("the dashboard: audit log", () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  const rowTypes = () =>
    page
      .locator("tr[data-event-type]")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-event-type")));
  const api = async (path: string, init: Parameters<typeof userApi>[3] = {}) =>
    userApi(t, await sessionToken(context), path, init);

  beforeAll(async () => {
    [t, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
    ({ context, page, problems } = await openPage(browser));
    await signUp(page, "auditor@example.com", t.url);
    expect((await api("/keys", { method: "POST", json: { name: "deploy" } })).status).toBe(201);
    // Enough changes for a second page (50 events a page).
    for (let i = 0; i < 50; i++)
      expect(
        (await api("/secrets", { method: "POST", json: { name: "API_TOKEN", value: `v${i}` } })).status,
      ).toBeLessThan(300);
  });
  afterEach(async ({ task }) => {
    await screenshotOnFailure(page, task);
    expect(problems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.dispose();
  });

  test("lists the account's events newest first; older ones load on asking", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    await expect.poll(async () => (await rowTypes()).length, settle).toBe(50);
    expect((await rowTypes())[0]).toBe("secret.updated");
    const secretRow = page.locator('tr[data-event-type="secret.updated"]').first();
    expect(await secretRow.textContent()).toMatch(/session session:\w+.*127\.0\.0\.1.*secret API_TOKEN/);
    await page.getByRole("button", { name: "Older events" }).click();
    await expect.poll(async () => (await rowTypes()).length, settle).toBe(53);
    expect((await rowTypes()).slice(-4)).toEqual([
      "secret.created",
      "key.created",
      "auth.login_succeeded",
      "account.signed_up",
    ]);
    await expect.poll(() => page.getByRole("button", { name: "Older events" }).count(), settle).toBe(0);
    // No value of a secret is ever on the page.
    expect(await page.locator("body").textContent()).not.toMatch(/\bv\d+\b/);
  });

  test("the type filter narrows the table to one family of events", async () => {
    await page.getByRole("textbox", { name: "Type" }).click();
    await page.getByRole("option", { name: "API keys" }).click();
    await expect.poll(rowTypes, settle).toEqual(["key.created"]);
    expect(await page.locator('tr[data-event-type="key.created"]').textContent()).toContain("key deploy");
    await page.getByRole("textbox", { name: "Type" }).click();
    await page.getByRole("option", { name: "Limits hit" }).click();
    await page.getByText("No events of this type.").waitFor();
  });

  test("axe-core finds nothing serious or critical on the Audit log page", async () => {
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
      await logIn(on, "auditor@example.com");
      await on.getByRole("navigation").getByRole("link", { name: "Audit log" }).click();
      await on.locator('tr[data-event-type="secret.updated"]').first().waitFor();
      expect(await seriousViolations(on)).toEqual([]);
    } finally {
      await checked.context.close();
    }
  });
});
