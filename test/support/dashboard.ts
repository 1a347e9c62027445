import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { DeepPartial, PaddockConfig } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import axe from "axe-core";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";

/** The password every account in the dashboard's tests and screenshots is given. */
export const password = "correct horse battery";

/**
 * Headless Debian Chromium. The background-networking flags keep it from calling home, which on
 * this closed network would only fill the logs and slow the page down.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.PADDOCK_TEST_CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Where `npm run build -w @paddock/dashboard` leaves index.html; throws when it has not been run. */
export function assertDashboardBuilt(): void {
  const manifest = createRequire(import.meta.url).resolve("@paddock/dashboard/package.json");
  const index = join(dirname(manifest), "dist", "index.html");
  if (!existsSync(index)) {
    throw new Error(
      `the dashboard is not built (${index} is missing): run \`npm run build -w @paddock/dashboard\` (or \`npm run build\`) first`,
    );
  }
}

/** A live server (real Docker and gVisor) serving the built dashboard at `/`. */
export async function startDashboardServer(config: DeepPartial<PaddockConfig> = {}): Promise<TestServer> {
  assertDashboardBuilt();
  return startTestServer({ config });
}

/**
 * A fresh context (its own cookies) with a page on it. `problems` collects what should never
 * happen on the page: uncaught errors and Content-Security-Policy refusals.
 */
export async function openPage(
  browser: Browser,
  options: Parameters<Browser["newContext"]>[0] = {},
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) {
      problems.push(message.text());
    }
  });
  return { context, page, problems };
}

/**
 * A labelled text field by its accessible name (Mantine's required asterisk is aria-hidden, so
 * the name is the label's words alone).
 */
export function field(scope: Page | Locator, name: string): Locator {
  return scope.getByRole("textbox", { name, exact: true });
}

/**
 * Signs up through the page's form (opened at `baseUrl` when given, else already on screen);
 * resolves on the Sandboxes page.
 */
export async function signUp(page: Page, email: string, baseUrl?: string): Promise<void> {
  if (baseUrl) await page.goto(`${baseUrl}/#/signup`);
  await page.getByRole("heading", { name: "Create your Paddock account", level: 1 }).waitFor();
  await field(page, "Email").fill(email);
  await field(page, "Password").fill(password);
  await page.getByRole("button", { name: "Sign up" }).click();
  await page.getByRole("heading", { name: "Sandboxes", level: 1 }).waitFor();
}

/** Logs in through the page's form from the login page; resolves on the page it leads to. */
export async function logIn(page: Page, email: string, typedPassword = password): Promise<void> {
  await field(page, "Email").fill(email);
  await field(page, "Password").fill(typedPassword);
  await page.getByRole("button", { name: "Log in", exact: true }).click();
}

/** The session token the browser holds (the HttpOnly `paddock_session` cookie), for API calls. */
export async function sessionToken(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((candidate) => candidate.name === "paddock_session");
  if (!cookie?.value) throw new Error("the browser holds no paddock_session cookie: is it logged in?");
  return cookie.value;
}

/** The terminal's rows as xterm's DOM renderer shows them, trailing blanks trimmed. */
export function terminalRows(page: Page): Promise<string[]> {
  return page
    .getByTestId("terminal")
    .locator(".xterm-rows > div")
    .evaluateAll((rows) => rows.map((row) => (row.textContent ?? "").replace(/\s+$/, "")));
}

/** Types a command into the terminal (focused by a click) and presses Enter. */
export async function runInTerminal(page: Page, command: string): Promise<void> {
  await page.getByTestId("terminal").click();
  await page.keyboard.type(command);
  await page.keyboard.press("Enter");
}

/** Marks the page's window, so `stillSamePage` can tell it was never reloaded. */
export async function markPage(page: Page): Promise<void> {
  await page.evaluate(() => {
    (globalThis as { paddockTestMark?: boolean }).paddockTestMark = true;
  });
}

export function stillSamePage(page: Page): Promise<boolean> {
  return page.evaluate(() => (globalThis as { paddockTestMark?: boolean }).paddockTestMark === true);
}

/** A locator's visible text, trimmed; "" while it is not on the page (for expect.poll). */
export async function textOf(locator: Locator): Promise<string> {
  try {
    return ((await locator.textContent({ timeout: 1000 })) ?? "").trim();
  } catch {
    return "";
  }
}

/** After a failed test: a screenshot of the page as it was, in the temp folder, named in the log. */
export async function screenshotOnFailure(
  page: Page | undefined,
  task: { name: string; result?: { state?: string } },
): Promise<void> {
  if (task.result?.state !== "fail" || !page || page.isClosed()) return;
  const path = join(tmpdir(), `paddock-dashboard-${task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}.png`);
  await page.screenshot({ path }).then(
    () => console.error(`the page when "${task.name}" failed: ${path}`),
    () => undefined,
  );
}

export interface Violation {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

/** axe-core's serious and critical findings on the page as it is now. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  // Colours are judged once transitions end (a dialog fading in is, for a moment, grey on grey);
  // spinners and the like run for ever.
  await page.waitForFunction(
    `document.getAnimations().every((a) => a.playState !== "running" || a.effect.getTiming().iterations === Infinity)`,
  );
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.addScriptTag({ content: axe.source });
  const violations = await page.evaluate(async () => {
    // The whole document, with axe's default rules (WCAG 2 A and AA among them).
    const results = await (globalThis as unknown as { axe: typeof axe }).axe.run({
      resultTypes: ["violations"],
    });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.slice(0, 5).map((node) => `${node.target.join(" ")}: ${node.failureSummary}`),
    }));
  });
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}
