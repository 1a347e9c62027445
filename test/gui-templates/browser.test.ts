import { startTestServer, type TestServer } from "@paddock/server/testing";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { readVncGreeting, userConnection } from "../support/user.js";

// The browser template under gVisor: Chromium's DevTools protocol answers from outside the
// sandbox through the endpoint proxy (its HTTP /json/version and its browser WebSocket, which
// playwright-core drives to open a page served inside the sandbox), and the display Chromium
// draws on can be watched through noVNC's WebSocket bridge.

describe("browser template", () => {
  let t: TestServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer({ config: { secure_runtime: { type: "gvisor" } } });
    sandbox = await Sandbox.create({ ...(await userConnection(t, "browser")), template: "browser" });
  });
  afterAll(async () => {
    await sandbox?.kill().catch(() => undefined);
    await t?.dispose();
  });

  test("playwright-core drives the sandbox's Chromium over CDP through the endpoint proxy", async () => {
    // A page served inside the sandbox, on its loopback: only the sandbox's Chromium can load it.
    const title = `Paddock page ${Math.random().toString(36).slice(2)}`;
    await sandbox.commands.run(
      `mkdir -p /tmp/site && printf '<!doctype html><title>%s</title><h1 id="greeting">served in the sandbox</h1>' '${title}' > /tmp/site/index.html`,
    );
    await sandbox.commands.run("python3 -m http.server 8000 --bind 127.0.0.1 --directory /tmp/site", {
      background: true,
    });
    await sandbox.commands.run(
      "for i in $(seq 100); do curl -sf http://127.0.0.1:8000/ >/dev/null && exit 0; sleep 0.1; done; exit 1",
    );

    const { url } = await sandbox.getEndpoint(9222);
    const response = await fetch(`${url}json/version`);
    expect(response.status).toBe(200);
    const version = (await response.json()) as { Browser: string; webSocketDebuggerUrl: string };
    expect(version.Browser).toMatch(/^Chrome\/\d+\.\d+\.\d+\.\d+$/);
    // Chromium builds the URL from the Host header the proxy sent: the sandbox's address and 9222.
    const debuggerUrl = new URL(version.webSocketDebuggerUrl);
    expect(debuggerUrl.port).toBe("9222");
    expect(debuggerUrl.pathname).toMatch(/^\/devtools\/browser\/[0-9a-f-]{36}$/);

    const wsUrl = `${url.replace(/^http/, "ws")}${debuggerUrl.pathname.slice(1)}`;
    const browser = await chromium.connectOverCDP(wsUrl);
    try {
      expect(browser.version()).toBe(version.Browser.slice("Chrome/".length));
      const context = browser.contexts()[0];
      if (!context) throw new Error("the browser has no default context");
      const page = await context.newPage();
      await page.goto("http://127.0.0.1:8000/");
      expect(await page.title()).toBe(title);
      expect(await page.textContent("#greeting")).toBe("served in the sandbox");
      // The page is in the browser on the display: the window manager lists its window by title.
      const windows = await sandbox.commands.run(
        `timeout 30 xdotool search --sync --onlyvisible --name '${title}' getwindowname`,
      );
      expect(windows.stdout).toContain(title);
      await page.close();
    } finally {
      await browser.close();
    }
  });

  test("the display Chromium draws on answers VNC through noVNC's WebSocket bridge", async () => {
    const { url } = await sandbox.getEndpoint(6080);
    const page = await fetch(`${url}vnc.html`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<title>noVNC<\/title>/);
    const greeting = await readVncGreeting(`${url.replace(/^http/, "ws")}websockify`);
    expect(greeting).toMatch(/^RFB 003\.00\d\n$/);
  });
});
