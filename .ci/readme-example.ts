// Runs the README's TypeScript examples, as written, against the Paddock that `make run` started,
// and checks what they print: the first (Paddock's SDK), then "Coming from E2B" (E2B's stock SDK
// with the variables that section sets). Then opens the dashboard where the README says, in
// Chromium, and logs in. A README whose example does not work fails CI.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const root = join(import.meta.dirname, "..");
const baseUrl = "http://127.0.0.1:8080";
const readme = readFileSync(join(root, "README.md"), "utf8");
const tsBlock = (text: string) => /```ts\n([\s\S]*?)```/.exec(text)?.[1];

/** Runs one example inside the checkout, so its imports resolve as a user's would; checks it prints 42. */
function runExample(name: string, example: string | undefined, env: Record<string, string> = {}) {
  if (!example) throw new Error(`README.md has no \`\`\`ts example for ${name}`);
  const dir = mkdtempSync(join(root, ".ci/example-"));
  try {
    const file = join(dir, "example.ts");
    writeFileSync(file, example);
    const output = execFileSync(process.execPath, ["--import", "tsx", file], {
      encoding: "utf8",
      timeout: 180_000,
      env: { ...process.env, ...env },
    });
    process.stdout.write(output);
    if (output.trim() !== "42") throw new Error(`${name} printed ${JSON.stringify(output)}, not "42"`);
    console.log(`${name}: ok`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runExample("the README's first example", tsBlock(readme));

// The E2B section's key, as `paddock keys create --format e2b` makes it, for the account the first
// example signed up.
const json = { "content-type": "application/json" };
const login = await fetch(`${baseUrl}/auth/login`, {
  method: "POST",
  headers: json,
  body: JSON.stringify({ email: "me@example.com", password: "a long password" }),
});
const { token } = (await login.json()) as { token: string };
const key = await fetch(`${baseUrl}/keys`, {
  method: "POST",
  headers: { ...json, authorization: `Bearer ${token}` },
  body: JSON.stringify({ name: "e2b", format: "e2b" }),
});
const { secret } = (await key.json()) as { secret: string };
const e2bSection = readme.slice(readme.indexOf("## Coming from E2B"));
runExample("the README's E2B example", tsBlock(e2bSection), {
  E2B_API_URL: `${baseUrl}/e2b`,
  E2B_SANDBOX_URL: `${baseUrl}/e2b`,
  E2B_API_KEY: secret,
});

// "The dashboard": the address the README gives, in a real browser, logged in as that account.
const dashboardUrl = /open \*\*(http:\/\/[^*]+)\*\* in a browser/.exec(readme)?.[1];
if (dashboardUrl !== `${baseUrl}/`) throw new Error(`README.md's dashboard address is ${dashboardUrl}`);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
});
try {
  const page = await browser.newPage();
  await page.goto(dashboardUrl);
  await page.getByLabel("Email").fill("me@example.com");
  await page.getByLabel("Password").fill("a long password");
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Sandboxes" }).waitFor({ timeout: 30_000 });
  console.log("the README's dashboard: ok");
} finally {
  await browser.close();
}
