import { randomBytes } from "node:crypto";
import { inflateSync } from "node:zlib";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { userConnection } from "../support/user.js";

// The playwright template: a script written into the sandbox serves a page from the sandbox
// itself, drives Debian's Chromium through playwright-core under gVisor, and leaves a
// screenshot the test downloads and decodes.

interface Png {
  width: number;
  height: number;
  /** Colour at (x, y) as [r, g, b]. */
  pixel(x: number, y: number): [number, number, number];
}

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes for screenshots). */
function decodePng(bytes: Uint8Array): Png {
  const data = Buffer.from(bytes);
  let offset = 8;
  let header: Buffer | undefined;
  const idat: Buffer[] = [];
  while (offset < data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.toString("latin1", offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") header = body;
    if (type === "IDAT") idat.push(body);
    offset += 12 + length;
  }
  if (!header) throw new Error("PNG without IHDR");
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const [bitDepth, colourType, interlace] = [header.readUInt8(8), header.readUInt8(9), header.readUInt8(12)];
  if (bitDepth !== 8 || (colourType !== 2 && colourType !== 6) || interlace !== 0)
    throw new Error(`unsupported PNG: depth ${bitDepth}, colour type ${colourType}, interlace ${interlace}`);
  const channels = colourType === 6 ? 4 : 3;
  const stride = width * channels;
  const raw = inflateSync(Buffer.concat(idat));
  const pixels = Buffer.alloc(stride * height);
  const at = (x: number, y: number) => (x < 0 || y < 0 ? 0 : pixels.readUInt8(y * stride + x));
  for (let y = 0; y < height; y++) {
    const filter = raw.readUInt8(y * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const [a, b, c] = [at(i - channels, y), at(i, y - 1), at(i - channels, y - 1)];
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter];
      if (predictor === undefined) throw new Error(`unknown PNG filter ${filter}`);
      pixels.writeUInt8((raw.readUInt8(y * (stride + 1) + 1 + i) + predictor) & 0xff, y * stride + i);
    }
  }
  return {
    width,
    height,
    pixel: (x, y) => {
      const offset = x * channels;
      return [at(offset, y), at(offset + 1, y), at(offset + 2, y)];
    },
  };
}

describe("playwright template", () => {
  let t: TestServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer({ config: { secure_runtime: { type: "gvisor" } } });
    sandbox = await Sandbox.create({ ...(await userConnection(t, "playwright")), template: "playwright" });
  });
  afterAll(async () => {
    await sandbox?.kill().catch(() => undefined);
    await t?.dispose();
  });

  test("a script anywhere imports playwright-core and screenshots a page served in the sandbox", async () => {
    const token = randomBytes(6).toString("hex");
    // A colour only this run knows, so the decoded pixels prove the page was really painted.
    const random = randomBytes(3);
    const channel = (i: number) => 40 + (random.readUInt8(i) % 160);
    const colour: [number, number, number] = [channel(0), channel(1), channel(2)];
    const script = `
import { createServer } from "node:http";
import { chromium } from "playwright-core";

const page = \`<!doctype html><html><head><title>Paddock ${token}</title></head>
<body style="margin:0;background:rgb(${colour.join(",")})"><h1 id="greeting">hello ${token}</h1></body></html>\`;
const server = createServer((request, response) => {
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  response.end(page);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
// No executablePath: the template points Playwright's own browser lookup at Debian's Chromium.
const browser = await chromium.launch();
const tab = await browser.newPage({ viewport: { width: 800, height: 600 } });
await tab.goto(\`http://127.0.0.1:\${server.address().port}/\`);
console.log(JSON.stringify({
  title: await tab.title(),
  heading: await tab.textContent("#greeting"),
  version: browser.version(),
}));
await tab.screenshot({ path: "/tmp/work/page.png" });
await browser.close();
server.close();
`;
    // A directory with no node_modules of its own: resolution relies on the template alone.
    await sandbox.files.makeDir("/tmp/work");
    await sandbox.files.write("/tmp/work/screenshot.mjs", script);
    const run = await sandbox.commands.run("cd /tmp/work && node screenshot.mjs", { timeoutMs: 180_000 });
    const printed = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "") as {
      title: string;
      heading: string;
      version: string;
    };
    expect(printed.title).toBe(`Paddock ${token}`);
    expect(printed.heading).toBe(`hello ${token}`);

    // The browser Playwright launched is the image's Debian Chromium.
    const debian = await sandbox.commands.run("chromium --version");
    expect(debian.stdout).toContain(`Chromium ${printed.version} `);

    const png = await sandbox.files.read("/tmp/work/page.png", { format: "bytes" });
    expect([...png.subarray(0, 8)]).toEqual(pngSignature);
    expect(png.length).toBeGreaterThan(500);
    const image = decodePng(png);
    expect({ width: image.width, height: image.height }).toEqual({ width: 800, height: 600 });
    // Below the heading, the body's background fills the viewport.
    expect(image.pixel(400, 450)).toEqual(colour);
    expect(image.pixel(790, 590)).toEqual(colour);
    // The heading's text is drawn (dark glyph pixels) somewhere in its line.
    let glyphs = 0;
    for (let x = 0; x < 400; x++) {
      for (let y = 20; y < 60; y++) {
        const [r, g, b] = image.pixel(x, y);
        if (r + g + b < 100) glyphs++;
      }
    }
    expect(glyphs).toBeGreaterThan(50);
  });

  test("require() resolves playwright-core from any directory, and an explicit executablePath works", async () => {
    const env = await sandbox.commands.run('printf %s "$PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH"');
    expect(env.stdout).toBe("/usr/bin/chromium");
    const script = `
const { chromium } = require("playwright-core");
(async () => {
  const browser = await chromium.launch({ executablePath: process.env.PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH });
  const page = await browser.newPage();
  await page.setContent("<title>set</title><p>" + (6 * 7) + "</p>");
  console.log(JSON.stringify({ title: await page.title(), text: await page.textContent("p") }));
  await browser.close();
})();
`;
    await sandbox.files.write("/srv/explicit.cjs", script);
    const run = await sandbox.commands.run("cd / && node /srv/explicit.cjs", { timeoutMs: 180_000 });
    expect(JSON.parse(run.stdout.trim())).toEqual({ title: "set", text: "42" });
    const resolved = await sandbox.commands.run("cd /var && node -p 'require.resolve(\"playwright-core\")'");
    expect(resolved.stdout.trim()).toBe("/usr/local/lib/node_modules/playwright-core/index.js");
  });
});
