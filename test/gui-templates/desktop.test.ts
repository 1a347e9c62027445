import { startTestServer, type TestServer } from "@paddock/server/testing";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { readVncGreeting, userConnection } from "../support/user.js";

// The desktop template under gVisor: a window opened by a command run through execd lands on the
// virtual display (DISPLAY comes from the image), a screenshot of that display is not blank, and
// noVNC's page and its WebSocket bridge to the VNC server answer through the endpoint proxy, so
// that noVNC in a browser on the host shows the desktop.

// Counts the distinct pixel values of the root window in the X dump `xwd` writes (a 100-byte
// header of big-endian 32-bit fields, the window name, the colour map, then the pixels).
const countColours = `
import struct, sys
dump = sys.stdin.buffer.read()
fields = struct.unpack(">25I", dump[:100])
header, width, height, bpp, stride, ncolours = fields[0], fields[4], fields[5], fields[11], fields[12], fields[19]
pixels = dump[header + 12 * ncolours:]
step = bpp // 8
seen = set()
for y in range(height):
    line = pixels[y * stride:y * stride + width * step]
    seen.update(line[i:i + step] for i in range(0, len(line), step))
print(width, height, len(seen))
`;

describe("desktop template", () => {
  let t: TestServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer({ config: { secure_runtime: { type: "gvisor" } } });
    sandbox = await Sandbox.create({ ...(await userConnection(t, "desktop")), template: "desktop" });
  });
  afterAll(async () => {
    await sandbox?.kill().catch(() => undefined);
    await t?.dispose();
  });

  test("a window opened through execd is drawn on the display, and a screenshot of it is not blank", async () => {
    expect((await sandbox.commands.run("echo $DISPLAY")).stdout).toBe(":1\n");
    await sandbox.commands.run(
      "st -t paddock-test-window -e sh -c 'echo hello from the sandbox; sleep 600'",
      {
        background: true,
      },
    );
    // xdotool --sync waits until a window with that title is mapped.
    const found = await sandbox.commands.run(
      "timeout 60 xdotool search --sync --onlyvisible --name paddock-test-window",
    );
    expect(found.stdout).toMatch(/^\d+\n$/);
    const geometry = await sandbox.commands.run(`xwininfo -id ${found.stdout.trim()}`);
    expect(geometry.stdout).toMatch(/Map State: IsViewable/);

    const shot = await sandbox.commands.run(`xwd -root -silent | python3 -c '${countColours}'`);
    const [width, height, colours] = shot.stdout.trim().split(" ").map(Number);
    expect({ width, height }).toEqual({ width: 1280, height: 800 });
    // The wallpaper, the panel, the window's frame and its text: far more than one colour.
    expect(colours).toBeGreaterThan(16);

    // paddock-screenshot writes a PNG of the same display: check its signature and size.
    const png = await sandbox.commands.run(
      "paddock-screenshot /tmp/shot.png && head -c 24 /tmp/shot.png | od -An -tx1",
    );
    const bytes = Buffer.from(png.stdout.replace(/\s+/g, ""), "hex");
    expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(bytes.toString("latin1", 12, 16)).toBe("IHDR");
    expect({ width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }).toEqual({
      width: 1280,
      height: 800,
    });
  });

  test("noVNC's page answers through the endpoint proxy", async () => {
    const { url } = await sandbox.getEndpoint(6080);
    const response = await fetch(`${url}vnc.html`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toMatch(/<title>noVNC<\/title>/);
    expect(page).toMatch(/app\/ui\.js/);
  });

  test("a WebSocket through the endpoint proxy reaches the VNC server via websockify", async () => {
    const { url } = await sandbox.getEndpoint(6080);
    const greeting = await readVncGreeting(`${url.replace(/^http/, "ws")}websockify`);
    expect(greeting).toMatch(/^RFB 003\.00\d\n$/);
  });

  test("noVNC in a browser on the host connects through the endpoint and shows the whole display", async () => {
    const { url } = await sandbox.getEndpoint(6080);
    // noVNC joins host, port and `path` into its WebSocket URL, so behind the proxy `path` carries
    // the endpoint's own path.
    const path = `${new URL(url).pathname.slice(1)}websockify`;
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      // The page needs nothing but the endpoint: every other name resolves to nothing.
      args: [`--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE ${new URL(url).hostname}`],
    });
    try {
      // Larger than the display, so that noVNC draws all of it unclipped.
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${url}vnc.html?autoconnect=true&path=${encodeURIComponent(path)}`);
      await page.locator("html.noVNC_connected").waitFor({ timeout: 60_000 });
      const canvas = page.locator("#noVNC_container canvas");
      await canvas.waitFor();
      const size = await canvas.evaluate((element) => {
        const { width, height } = element as unknown as { width: number; height: number };
        return { width, height };
      });
      expect(size).toEqual({ width: 1280, height: 800 });
      // The framebuffer arrived: the canvas holds the desktop's many colours, not one fill.
      await page.waitForFunction(
        `(() => {
          const canvas = document.querySelector("#noVNC_container canvas");
          const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
          const colours = new Set();
          for (let i = 0; i < pixels.length && colours.size <= 16; i += 4)
            colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
          return colours.size > 16;
        })()`,
        undefined,
        { timeout: 60_000 },
      );
    } finally {
      await browser.close();
    }
  });
});
