import type { TestServer } from "@paddock/server/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  field,
  launchChromium,
  logIn,
  openPage,
  password,
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

/**
 * Who sees what: a session that lapses under a half-filled form, a second account that sees
 * nothing of the first's, the page's headers, accessibility (axe-core) and a phone-sized screen.
 */
describe("the dashboard's sessions, isolation and accessibility", () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[][] = [];
  const alice = "alice-access@example.com";
  let sandboxId = "";

  const heading = (on: Page, name: string) => on.getByRole("heading", { name, level: 1 });
  const nav = (on: Page, name: string) => on.getByRole("navigation").getByRole("link", { name }).click();

  beforeAll(async () => {
    [t, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
    const opened = await openPage(browser);
    ({ context, page } = opened);
    problems.push(opened.problems);
  });
  afterEach(async ({ task }) => {
    await screenshotOnFailure(page, task);
    // No uncaught error and no CSP refusal in any page the tests opened.
    expect(problems.flatMap((list) => list.splice(0))).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.dispose();
  });

  test("/ is served with a Content-Security-Policy that forbids inline scripts and framing", async () => {
    const response = await fetch(`${t.url}/`);
    expect(response.status).toBe(200);
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("connect-src 'self'");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("a session ended under a half-filled form: log in again in the dialog and the form is as it was", async () => {
    await signUp(page, alice, t.url);
    await page.getByRole("button", { name: "New sandbox" }).click();
    const form = page.getByRole("dialog", { name: "New sandbox" });
    await field(form, "Lifetime (seconds)").fill("1800");
    await form.getByRole("button", { name: "Add label" }).click();
    await field(form, "Metadata: Key 1").fill("purpose");
    await field(form, "Metadata: Value 1").fill("typed-before-expiry");

    const ended = await userApi(t, await sessionToken(context), "/auth/logout", { method: "POST" });
    expect(ended.status).toBe(204);
    await form.getByRole("button", { name: "Create sandbox" }).click();

    const expired = page.getByRole("dialog", { name: "Your session has expired" });
    await expired.waitFor();
    expect(await field(expired, "Email").inputValue()).toBe(alice);
    await field(expired, "Password").fill(password);
    await expired.getByRole("button", { name: "Log in", exact: true }).click();
    await expired.waitFor({ state: "hidden" });

    expect(await field(form, "Lifetime (seconds)").inputValue()).toBe("1800");
    expect(await field(form, "Metadata: Key 1").inputValue()).toBe("purpose");
    expect(await field(form, "Metadata: Value 1").inputValue()).toBe("typed-before-expiry");
    await form.getByRole("button", { name: "Create sandbox" }).click();
    await page.waitForURL(/#\/sandboxes\/[^/]+$/);
    sandboxId = decodeURIComponent(new URL(page.url()).hash.split("/").pop() as string);
    await page.getByText("purpose=typed-before-expiry").waitFor();
    await expect.poll(() => textOf(page.getByTestId("sandbox-state")), { timeout: 90_000 }).toBe("Running");
  });

  test("a second account sees none of the first's sandboxes, keys, secrets, memory or usage", async () => {
    // Give the first account one of everything.
    const token = await sessionToken(context);
    const made = await Promise.all([
      userApi(t, token, "/keys", { method: "POST", json: { name: "alice-laptop" } }),
      userApi(t, token, "/secrets", { method: "POST", json: { name: "ALICE_TOKEN", value: "alice-only" } }),
      userApi(t, token, "/memory", { method: "POST", json: { content: "Alice's private note", tags: [] } }),
    ]);
    expect(made.map((response) => response.status)).toEqual([201, 201, 201]);
    const usage = (await (await userApi(t, token, "/usage/sandboxes")).json()) as { items: unknown[] };
    expect(usage.items).toHaveLength(1);

    const bob = await openPage(browser);
    problems.push(bob.problems);
    const other = bob.page;
    await signUp(other, "bob-access@example.com", t.url);
    await other.getByText("No sandboxes yet").waitFor();
    expect(await other.locator("tr[data-sandbox-id]").count()).toBe(0);
    await nav(other, "API keys");
    await other.getByText("No API keys yet").waitFor();
    await nav(other, "Secrets");
    await other.getByText("No secrets yet.").waitFor();
    await nav(other, "Memory");
    await other.getByText("Nothing in memory yet.").waitFor();
    await nav(other, "Usage");
    await other.getByText("No sandbox has run this month.").waitFor();
    await nav(other, "Audit log");
    await other.locator('tr[data-event-type="account.signed_up"]').waitFor();
    expect(
      await other
        .locator("tr[data-event-type]")
        .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-event-type"))),
    ).toEqual(["auth.login_succeeded", "account.signed_up"]);
    expect(await other.content()).not.toMatch(/alice|ALICE_TOKEN|sbx-/i);

    await other.goto(`${t.url}/#/sandboxes/${sandboxId}`);
    const refusal = other.getByRole("alert").filter({ hasText: `Sandbox ${sandboxId}` });
    await expect.poll(() => textOf(refusal), settle).toMatch(/no sandbox/i);
    expect(await other.getByTestId("sandbox-state").count()).toBe(0);
    expect(await other.getByTestId("terminal").count()).toBe(0);
    expect(await other.getByRole("tab").count()).toBe(0);
    await bob.context.close();
  });

  test("axe-core finds nothing serious or critical on the login, sandboxes (and New sandbox), sandbox, keys and usage pages", async () => {
    // Only this context may inject axe's script past the page's CSP.
    // Reduced motion: dialogs appear at once (the theme respects it), so nothing is judged mid-fade.
    const checked = await openPage(browser, {
      bypassCSP: true,
      colorScheme: "light",
      reducedMotion: "reduce",
    });
    const on = checked.page;
    const found: Record<string, Violation[]> = {};
    await on.goto(t.url);
    await heading(on, "Log in to Paddock").waitFor();
    found.login = await seriousViolations(on);

    await logIn(on, alice);
    await heading(on, "Sandboxes").waitFor();
    await on.locator(`tr[data-sandbox-id="${sandboxId}"]`).waitFor();
    found.sandboxes = await seriousViolations(on);
    await on.getByRole("button", { name: "New sandbox" }).click();
    await on.getByRole("dialog", { name: "New sandbox" }).waitFor();
    found.newSandbox = await seriousViolations(on);
    await on.keyboard.press("Escape");
    await on.getByRole("dialog", { name: "New sandbox" }).waitFor({ state: "hidden" });

    await on.getByRole("link", { name: sandboxId }).click();
    await on.getByText("Connected", { exact: true }).waitFor({ timeout: 30_000 });
    found.sandbox = await seriousViolations(on);

    await nav(on, "API keys");
    await on.getByRole("row", { name: /alice-laptop/ }).waitFor();
    found.keys = await seriousViolations(on);

    await nav(on, "Usage");
    await on.getByRole("row", { name: new RegExp(sandboxId) }).waitFor();
    found.usage = await seriousViolations(on);

    expect(found).toEqual({ login: [], sandboxes: [], newSandbox: [], sandbox: [], keys: [], usage: [] });
    expect(checked.problems.filter((problem) => problem.startsWith("uncaught"))).toEqual([]);
    await checked.context.close();
  });

  test("on a phone-sized screen the navigation opens from the menu button, closes on any change of page, and the Sandboxes page works", async () => {
    const phone = await openPage(browser, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    problems.push(phone.problems);
    const on = phone.page;
    await on.goto(t.url);
    await logIn(on, alice);
    await heading(on, "Sandboxes").waitFor();

    const keysLink = on.getByRole("navigation").getByRole("link", { name: "API keys" });
    const onScreen = async () => {
      const box = await keysLink.boundingBox();
      return box !== null && box.x >= 0 && box.x + box.width <= 390;
    };
    expect(await onScreen()).toBe(false);
    await on.getByRole("button", { name: "Menu" }).click();
    await expect.poll(onScreen, settle).toBe(true);
    await keysLink.click();
    await heading(on, "API keys").waitFor();
    await expect.poll(onScreen, settle).toBe(false);

    await on.getByRole("button", { name: "Menu" }).click();
    await on.getByRole("navigation").getByRole("link", { name: "Sandboxes" }).click();
    await heading(on, "Sandboxes").waitFor();
    // The browser's Back, with the menu open, shows the page it goes to, not the menu.
    await on.getByRole("button", { name: "Menu" }).click();
    await expect.poll(onScreen, settle).toBe(true);
    await on.goBack();
    await heading(on, "API keys").waitFor();
    await expect.poll(onScreen, settle).toBe(false);
    await on.goForward();
    await heading(on, "Sandboxes").waitFor();
    // Nothing but the table scrolls sideways; the page itself fits the screen.
    expect(Number(await on.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390);
    const row = on.locator(`tr[data-sandbox-id="${sandboxId}"]`);
    await expect.poll(() => textOf(row.getByTestId("sandbox-state")), settle).toBe("Running");

    await on.getByRole("button", { name: "New sandbox" }).click();
    const dialog = on.getByRole("dialog", { name: "New sandbox" });
    await dialog.waitFor();
    const box = await dialog.boundingBox();
    expect(box !== null && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    await on.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });

    await row.getByRole("link", { name: sandboxId }).click();
    await on.getByRole("heading", { name: sandboxId }).waitFor();
    await expect.poll(() => textOf(on.getByTestId("sandbox-state")), settle).toBe("Running");
    await phone.context.close();
  });
});
