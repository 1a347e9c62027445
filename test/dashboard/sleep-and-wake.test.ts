import type { TestServer } from "@paddock/server/testing";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  field,
  launchChromium,
  openPage,
  screenshotOnFailure,
  sessionToken,
  signUp,
  startDashboardServer,
  textOf,
} from "../support/dashboard.js";
import { userApi } from "../support/user.js";

/** How long what the page shows may take to change, on two busy cores. */
const settle = { timeout: 15_000, interval: 100 };
/** A pause to disk stops the container and a resume from it starts it again: give both time. */
const sleepMove = { timeout: 90_000, interval: 250 };

const planIdleSeconds = 1200; // 20 minutes: not one of the form's own choices
const planMaxPausedDays = 7;

interface WireSandbox {
  state: string;
  lifecycle: Record<string, unknown>;
  pausedTo: string | null;
  memoryPreserved: boolean | null;
  idleAt: string | null;
}

/**
 * How sandboxes sleep and wake, through the dashboard: the create form's settings (with the
 * plan's default idle timeout shown and preselected), what the sandbox page and the list show,
 * and pausing in memory, to disk and resuming from the page. Each test goes on from the last.
 */
describe("the dashboard: sleep and wake", () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let sandboxId = "";

  const heading = (name: string) => page.getByRole("heading", { name, level: 1 });
  const record = async (id: string) =>
    (await (await userApi(t, await sessionToken(context), `/sandboxes/${id}`)).json()) as WireSandbox;
  const openCreateForm = async (): Promise<Locator> => {
    await page.getByRole("navigation").getByRole("link", { name: "Sandboxes" }).click();
    await page.getByRole("button", { name: "New sandbox" }).click();
    const form = page.getByRole("dialog", { name: "New sandbox" });
    await form.getByRole("button", { name: /Sleep and wake/ }).click();
    await field(form, "Pause when idle for").waitFor();
    return form;
  };
  const sandboxState = () => textOf(page.getByTestId("sandbox-state"));

  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startDashboardServer({
        plans: { free_idle_timeout_seconds: planIdleSeconds, free_max_paused_days: planMaxPausedDays },
      }),
      launchChromium(),
    ]);
    ({ context, page, problems } = await openPage(browser));
    await signUp(page, "sleeper@example.com", t.url);
  });
  afterEach(async ({ task }) => {
    await screenshotOnFailure(page, task);
    expect(problems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.dispose();
  });

  test("the create form shows the plan's idle timeout, preselected, and a create left to it gets it", async () => {
    const form = await openCreateForm();
    const idle = field(form, "Pause when idle for");
    await expect.poll(() => idle.inputValue(), settle).toBe("20 minutes (plan default)");
    expect(await textOf(form.getByText(/^Pauses when idle:/))).toBe(
      "Pauses when idle: 20 minutes (plan default); resumes on use",
    );
    expect(await textOf(form.getByText(/^Your plan deletes/))).toBe(
      `Your plan deletes a sandbox paused for ${planMaxPausedDays} days.`,
    );
    await idle.click();
    // The list opens after the click: wait for its options rather than read an empty list.
    await expect.poll(() => page.getByRole("option").allTextContents(), settle).toContain("Never");
    const choices = await page.getByRole("option").allTextContents();
    expect(choices[0]).toBe("20 minutes (plan default)");
    await page.keyboard.press("Escape");
    expect(await form.getByRole("radio", { name: "Kill it" }).isChecked()).toBe(true);
    expect(await form.getByRole("switch", { name: "Resume on use" }).isChecked()).toBe(true);
    expect(await form.getByRole("switch", { name: "Keep memory on pause to disk" }).isChecked()).toBe(true);

    // Created as the form stands: the idle timeout is left to the plan, which the server applies.
    await form.getByRole("button", { name: "Create sandbox" }).click();
    await page.waitForURL(/#\/sandboxes\/[^/]+$/);
    const id = decodeURIComponent(new URL(page.url()).hash.split("/").pop() as string);
    expect((await record(id)).lifecycle).toEqual({
      onTimeout: "kill",
      idleTimeout: planIdleSeconds,
      processesKeepAwake: true,
      autoResume: true,
      keepMemory: true,
      maxPaused: planMaxPausedDays * 86_400,
    });
    await expect
      .poll(() => textOf(page.getByTestId("sandbox-lifecycle")), settle)
      .toContain("Pauses after 20 minutes idle");
    expect(
      (await userApi(t, await sessionToken(context), `/sandboxes/${id}`, { method: "DELETE" })).status,
    ).toBe(204);
  });

  test("create with its own lifecycle; the sandbox page shows it and when it idles out", async () => {
    const form = await openCreateForm();
    await field(form, "Pause when idle for").click();
    await page.getByRole("option", { name: "5 minutes", exact: true }).click();
    await form.getByRole("radio", { name: "Pause it" }).check();
    await form.getByRole("switch", { name: "Keep memory on pause to disk" }).uncheck();
    expect(await textOf(form.getByText(/^Pauses when idle:/))).toBe(
      "Pauses when idle: 5 minutes; resumes on use",
    );
    await form.getByRole("button", { name: "Create sandbox" }).click();

    await page.waitForURL(/#\/sandboxes\/[^/]+$/);
    sandboxId = decodeURIComponent(new URL(page.url()).hash.split("/").pop() as string);
    await heading(sandboxId).waitFor();
    await expect.poll(sandboxState, { timeout: 90_000 }).toBe("Running");
    const sandbox = await record(sandboxId);
    expect(sandbox.lifecycle).toEqual({
      onTimeout: "pause",
      idleTimeout: 300,
      processesKeepAwake: true,
      autoResume: true,
      keepMemory: false,
      maxPaused: planMaxPausedDays * 86_400,
    });
    expect(sandbox.idleAt).not.toBeNull();

    await expect
      .poll(() => page.getByTestId("sandbox-lifecycle").locator("div").allTextContents(), settle)
      .toEqual([
        "Pauses after 5 minutes idle",
        "Running processes count as use",
        "Resumes on use",
        "At the end of its lifetime: paused",
        "Pause to disk keeps files only",
        `Deleted after ${planMaxPausedDays} days paused`,
      ]);
    const idlesOut = page.getByText("Idles out", { exact: true }).locator("xpath=following-sibling::*[1]");
    expect(await textOf(idlesOut)).toMatch(/\(in [1-5] minutes?\)$/);
    const lastActivity = page
      .getByText("Last activity", { exact: true })
      .locator("xpath=following-sibling::*[1]");
    expect(await textOf(lastActivity)).not.toBe("");
  });

  test("pause in memory, then to disk, from the page; the list shows where it sleeps and resumes it", async () => {
    // The pause answers while the sandbox is still Pausing. Its answer is held back here until the
    // change stream has shown the page Paused: the older answer, arriving last, must not roll the
    // page back to Pausing.
    await page.route("**/sandboxes/*/pause", async (route) => {
      const answer = await route.fetch();
      await expect.poll(sandboxState, sleepMove).toBe("Paused (memory)");
      await route.fulfill({ response: answer });
    });
    const answered = page.waitForResponse((response) => response.url().endsWith("/pause"));
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    expect(await (await answered).json()).toMatchObject({ state: "Pausing", pausedTo: "memory" });
    await page.unroute("**/sandboxes/*/pause");
    await page.waitForTimeout(1000); // for the page to take the answer in, however it does
    expect(await sandboxState()).toBe("Paused (memory)");
    expect(await record(sandboxId)).toMatchObject({
      state: "Paused",
      pausedTo: "memory",
      memoryPreserved: null,
    });

    // From memory it may still go to disk; once there, only a resume is offered.
    await page.getByRole("button", { name: "Pause to disk" }).click();
    await page
      .getByRole("dialog", { name: `Pause ${sandboxId} to disk?` })
      .getByRole("button", { name: "Pause to disk" })
      .click();
    await expect.poll(sandboxState, sleepMove).toBe("Paused (disk, processes restart on resume)");
    expect(await record(sandboxId)).toMatchObject({
      state: "Paused",
      pausedTo: "disk",
      memoryPreserved: false,
    });
    await page.getByRole("alert").filter({ hasText: "its processes start anew when it resumes" }).waitFor();
    expect(await page.getByRole("button", { name: "Pause to disk" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Pause", exact: true }).count()).toBe(0);

    await page.getByRole("navigation").getByRole("link", { name: "Sandboxes" }).click();
    const row = page.locator(`tr[data-sandbox-id="${sandboxId}"]`);
    await expect
      .poll(() => textOf(row.getByTestId("sandbox-state")), settle)
      .toBe("Paused (disk, processes restart on resume)");
    expect(await row.getByTestId("idles-out").count()).toBe(0); // a paused sandbox does not idle out
    await row.getByRole("button", { name: `Actions for ${sandboxId}` }).click();
    const menu = page.getByRole("menu");
    await expect
      .poll(() => menu.getByRole("menuitem").allTextContents(), settle)
      .toEqual(["Resume", "Renew", "Kill"]);
    await menu.getByRole("menuitem", { name: "Resume" }).click();
    await expect.poll(() => textOf(row.getByTestId("sandbox-state")), sleepMove).toBe("Running");
    expect(await record(sandboxId)).toMatchObject({
      state: "Running",
      pausedTo: null,
      memoryPreserved: null,
    });
    await expect
      .poll(() => textOf(row.getByTestId("idles-out")), settle)
      .toMatch(/^idles out in \d+ (minute|second)s?$/);
  });

  test("the Usage page shows the plan's idle policy", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Usage" }).click();
    await heading("Usage").waitFor();
    await expect
      .poll(() => textOf(page.getByTestId("plan-idle-policy")), settle)
      .toBe(
        `On your plan a sandbox created without its own settings pauses after 20 minutes idle and is deleted after ${planMaxPausedDays} days paused.`,
      );
  });
});
