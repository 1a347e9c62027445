// Takes the dashboard's screenshots in docs/screenshots/ (`make screenshots`): a live server with
// real sandboxes, an account with a little of everything, and Chromium at 1280×800 in the light
// theme. Run it after `npm run build -w @paddock/dashboard`.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import {
  field,
  launchChromium,
  runInTerminal,
  sessionToken,
  signUp,
  startDashboardServer,
  terminalRows,
  textOf,
} from "../test/support/dashboard.js";
import { userApi } from "../test/support/user.js";

const outDir = join(import.meta.dirname, "..", "docs", "screenshots");
const timeoutMs = 90_000;

/** Resolves once `check` holds, asking every 250 ms; throws with `what` after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function shoot(page: Page, name: string): Promise<void> {
  // Let charts finish their entry animation and the notifications fade.
  await page.waitForTimeout(800);
  const path = join(outDir, `${name}.png`);
  await page.screenshot({ path });
  console.log(`wrote ${path}`);
}

mkdirSync(outDir, { recursive: true });
const [t, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
try {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    colorScheme: "light",
    deviceScaleFactor: 1,
  });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  const nav = (name: string) => page.getByRole("navigation").getByRole("link", { name }).click();
  const heading = (name: string) => page.getByRole("heading", { name, level: 1 });

  await page.goto(t.url);
  await heading("Log in to Paddock").waitFor();
  await shoot(page, "login");

  await signUp(page, "ada@example.com", t.url);
  const token = await sessionToken(context);
  const call = async (path: string, json?: unknown, method = json === undefined ? "GET" : "POST") => {
    const response = await userApi(t, token, path, { method, ...(json === undefined ? {} : { json }) });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : ((await response.json()) as Record<string, unknown>);
  };

  // An account with a little of everything: keys, a secret, memory and three sandboxes.
  await call("/keys", { name: "laptop" });
  await call("/keys", { name: "ci-runner", scope: "sandboxes" });
  await call("/secrets", { name: "OPENAI_API_KEY", value: "sk-not-a-real-key" });
  for (const [content, tags] of [
    ["Deploy checklist: run the migrations, then restart the gateway behind the load balancer.", ["ops"]],
    ["The scraper's rate limit is 2 requests a second per host; back off on 429.", ["scraper"]],
    ["Customer asked for CSV exports with UTF-8 BOM so Excel opens them cleanly.", ["support", "exports"]],
    ["Staging deploys happen from the release branch every weekday at 10:00 UTC.", ["ops"]],
  ] as const) {
    await call("/memory", { content, tags });
  }
  const create = async (template: string, metadata: Record<string, string>) =>
    (await call("/sandboxes", { template, metadata, timeout: 3600 }))?.id as string;
  const [main, worker, paused] = await Promise.all([
    create("python", { project: "web-scraper" }),
    create("node", { project: "dashboard", team: "frontend" }),
    create("python", { project: "notebooks" }),
  ]);
  for (const id of [main, worker, paused]) {
    await until(`${id} Running`, async () => (await call(`/sandboxes/${id}`))?.state === "Running");
  }
  await call(`/sandboxes/${paused}/pause`, undefined, "POST");
  await call(`/sandboxes/${main}/files/write`, {
    path: "/root/scrape.py",
    content: 'import urllib.request\n\nprint(urllib.request.urlopen("https://example.com").status)\n',
  });
  await call(`/sandboxes/${main}/files/write`, {
    path: "/root/requirements.txt",
    content: "httpx==0.28.1\n",
  });
  await call(`/sandboxes/${main}/files/write`, { path: "/root/data/pages.csv", content: "url,status\n" });

  await page.reload();
  await heading("Sandboxes").waitFor();
  await until("the three rows", async () => (await page.locator("tr[data-sandbox-id]").count()) === 3);
  await until("the paused row", async () =>
    (await textOf(page.locator(`tr[data-sandbox-id="${paused}"]`).getByTestId("sandbox-state"))).includes(
      "Paused",
    ),
  );
  await shoot(page, "sandboxes");

  await page.getByRole("link", { name: main }).click();
  await page.getByText("Connected", { exact: true }).waitFor();
  // One command at a time, each after the one before has printed, as a person types them.
  const run = async (command: string, printed: (rows: string[]) => boolean) => {
    await runInTerminal(page, command);
    await until(`the output of ${command}`, async () => printed(await terminalRows(page)));
  };
  await run("python3 -c 'import platform; print(platform.python_version())'", (rows) =>
    rows.some((row) => /^3\.\d+\.\d+$/.test(row)),
  );
  await run("ls -la ~", (rows) => rows.some((row) => row.endsWith(" scrape.py")));
  await run("echo $((6*7))", (rows) => rows.includes("42"));
  await shoot(page, "sandbox");

  await page.getByRole("tab", { name: "Files" }).click();
  await field(page, "Folder").fill("/root");
  await field(page, "Folder").press("Enter");
  await page.locator('tr[data-file="scrape.py"]').waitFor();
  await shoot(page, "files");

  // Something to draw: a few seconds of busy CPU in the sandbox.
  await page.getByRole("tab", { name: "Terminal" }).click();
  await runInTerminal(page, "timeout 6 python3 -c 'while True: pass' &");
  await page.getByRole("tab", { name: "Metrics" }).click();
  await page.waitForTimeout(10_000);
  await shoot(page, "metrics");

  await nav("API keys");
  await page.getByRole("row", { name: /ci-runner/ }).waitFor();
  await shoot(page, "keys");

  await nav("Usage");
  await page.getByRole("row", { name: new RegExp(main) }).waitFor();
  await shoot(page, "usage");

  await nav("Memory");
  await field(page, "Search").fill("deploy gateway");
  await page.getByRole("button", { name: "Search" }).click();
  await page.locator("mark").first().waitFor();
  // The hits, not the empty add form, fill the picture.
  const entries = await page.getByRole("heading", { name: "Entries" }).boundingBox();
  await page.mouse.wheel(0, (entries?.y ?? 0) - 70);
  await shoot(page, "memory");

  // A template built from a Dockerfile written on the page, its log read to the end.
  await nav("Templates");
  await page.getByRole("button", { name: "New build" }).click();
  const form = page.getByRole("dialog", { name: "New build" });
  await field(form, "Template name").fill("scraper");
  await field(form, "Description").fill("Python with the scraper's code and settings");
  await field(form, "Dockerfile").fill(
    [
      "FROM python",
      "ENV SCRAPER_RATE=2",
      "WORKDIR /srv/scraper",
      "RUN python3 --version && pip --version",
      "RUN printf 'import os\\nprint(os.environ[\"SCRAPER_RATE\"])\\n' > main.py && python3 main.py",
    ].join("\n"),
  );
  await form.getByRole("button", { name: "Build" }).click();
  await until("the build", async () =>
    (await textOf(page.getByRole("region", { name: /^Build / }).getByTestId("build-status"))).includes(
      "ready",
    ),
  );
  await shoot(page, "templates");

  await context.close();
} finally {
  await browser.close();
  await t.dispose();
}
