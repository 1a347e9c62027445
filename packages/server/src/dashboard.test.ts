import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterEach, describe, expect, test } from "vitest";
import { serveDashboard } from "./dashboard.js";

describe("serveDashboard", () => {
  const roots: string[] = [];
  const root = () => {
    const dir = mkdtempSync(join(tmpdir(), "paddock-dashboard-"));
    roots.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  test("serves index.html at / uncached and hashed assets for a year, each with the page's headers; nothing else", async () => {
    const dist = root();
    mkdirSync(join(dist, "assets"));
    writeFileSync(join(dist, "index.html"), "<!doctype html><div id=root></div>");
    writeFileSync(join(dist, "assets", "index-abc123.js"), "console.log(1)");
    const app = Fastify();
    app.get("/sandboxes/:id", async () => ({ api: true }));
    await serveDashboard(app, dist);

    const page = await app.inject("/");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("<div id=root>");
    expect(page.headers["cache-control"]).toBe("no-cache");
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.headers["x-frame-options"]).toBe("DENY");

    const asset = await app.inject("/assets/index-abc123.js");
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");

    // The API keeps every other path: no catch-all answers for it.
    expect((await app.inject("/sandboxes/sbx-1")).json()).toEqual({ api: true });
    expect((await app.inject("/assets/missing.js")).statusCode).toBe(404);
    expect((await app.inject("/usage")).statusCode).toBe(404);
    await app.close();
  });

  test("without a build, / says how to build it", async () => {
    const app = Fastify();
    await serveDashboard(app, root());
    const page = await app.inject("/");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("npm run build");
    await app.close();
  });
});
