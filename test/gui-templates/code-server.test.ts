import { randomBytes } from "node:crypto";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { userConnection } from "../support/user.js";

// The code-server template under gVisor: the editor answers through the endpoint proxy (its
// page, its static files, and in a real Chromium on this host the workbench, whose file
// explorer reaches the sandbox over the proxied WebSocket), and the toolchain it ships builds
// and runs a program.

describe("code-server template", () => {
  let t: TestServer;
  let editor: Sandbox;

  beforeAll(async () => {
    t = await startTestServer({ config: { secure_runtime: { type: "gvisor" } } });
    // Create returns once port 8080's /healthz answers (the manifest's ready path).
    editor = await Sandbox.create({ ...(await userConnection(t, "code-server")), template: "code-server" });
  });
  afterAll(async () => {
    await editor?.kill().catch(() => undefined);
    await t?.dispose();
  });

  test("the workbench page and its static files load through the endpoint", async () => {
    const { url } = await editor.getEndpoint(8080);
    const health = await fetch(new URL("healthz", url));
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: expect.stringMatching(/^(alive|expired)$/) });

    // No login: the root redirects straight to the workspace folder.
    const root = await fetch(url, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("./?folder=/root");

    const page = await fetch(new URL("?folder=/root", url));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('id="vscode-workbench-web-configuration"');
    expect(html).toContain("&quot;codeServerVersion&quot;:&quot;4.117.0&quot;");
    const script = html.match(/src="([^"]*\/workbench\/workbench\.js)"/)?.[1];
    const stylesheet = html.match(/href="([^"]*\/workbench\/workbench\.css)"/)?.[1];
    expect({ script, stylesheet }).toEqual({ script: expect.any(String), stylesheet: expect.any(String) });
    for (const asset of [script, stylesheet] as string[]) {
      const response = await fetch(new URL(asset, page.url));
      expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
  });

  test("a server started in the sandbox is reachable under the editor's proxy/<port>/ path", async () => {
    const marker = `served-${randomBytes(6).toString("hex")}`;
    await editor.files.write(`/tmp/site/${marker}.txt`, `${marker}\n`);
    await editor.commands.run("cd /tmp/site && python3 -m http.server 3000 --bind 127.0.0.1", {
      background: true,
    });
    const { url } = await editor.getEndpoint(8080);
    let body = "";
    // The background server needs a moment to bind; retry until it answers.
    for (let attempt = 0; attempt < 50 && !body.includes(marker); attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      const response = await fetch(new URL(`proxy/3000/${marker}.txt`, url));
      body = response.ok ? await response.text() : "";
    }
    expect(body).toBe(`${marker}\n`);
  });

  test("in Chromium the workbench opens and lists the sandbox's files over the WebSocket", async () => {
    const marker = `paddock-${randomBytes(6).toString("hex")}.txt`;
    await editor.files.write(`/root/${marker}`, "written before the editor opened\n");
    const { url } = await editor.getEndpoint(8080);
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      // The workbench asks for an extension gallery on the internet: names other than the
      // endpoint's loopback address resolve to nothing, so the browser sends nothing out.
      args: [`--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE ${new URL(url).hostname}`],
    });
    try {
      const page = await browser.newPage();
      const sockets: string[] = [];
      page.on("websocket", (socket) => sockets.push(socket.url()));
      await page.goto(url);
      await page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
      // The explorer's listing of /root comes from the server's file system, over the socket.
      await page
        .locator(".explorer-folders-view")
        .getByText(marker, { exact: true })
        .waitFor({ timeout: 120_000 });
      expect(sockets.length).toBeGreaterThan(0);
      for (const socket of sockets) expect(socket.startsWith(url.replace(/^http/, "ws"))).toBe(true);
    } finally {
      await browser.close();
    }
  });

  test("git, Python and a C toolchain are there and build a program", async () => {
    const versions = await editor.commands.run(
      "git --version && python3 --version && python --version && gcc --version | head -n 1 && " +
        "g++ --version | head -n 1 && make --version | head -n 1 && rg --version | head -n 1 && " +
        "code-server --version",
    );
    expect(versions.stdout).toMatch(/^git version 2\.\d+/m);
    expect(versions.stdout).toMatch(/^Python 3\.\d+\.\d+\nPython 3\.\d+\.\d+$/m);
    expect(versions.stdout).toMatch(/^gcc .* 12\.\d+\.\d+$/m);
    expect(versions.stdout).toMatch(/^g\+\+ .* 12\.\d+\.\d+$/m);
    expect(versions.stdout).toMatch(/^GNU Make 4\.\d+$/m);
    expect(versions.stdout).toMatch(/^ripgrep 13\.\d+\.\d+/m);
    expect(versions.stdout).toMatch(/^4\.117\.0 [0-9a-f]{40} with Code 1\.117\.0$/m);

    const seed = randomBytes(2).readUInt16BE();
    await editor.files.write(
      "/root/build/hello.c",
      `#include <stdio.h>\nint main(void) { printf("sum %d\\n", ${seed} + 1); return 0; }\n`,
    );
    await editor.files.write("/root/build/Makefile", "hello: hello.c\n\tgcc -O2 -o hello hello.c\n");
    const built = await editor.commands.run("cd /root/build && make && ./hello");
    expect(built.stdout).toContain(`sum ${seed + 1}\n`);
    const python = await editor.commands.run(
      "python3 -m venv /tmp/venv && /tmp/venv/bin/python -c 'import sys; print(sys.prefix)'",
      { timeoutMs: 120_000 },
    );
    expect(python.stdout.trim()).toBe("/tmp/venv");
  });
});
