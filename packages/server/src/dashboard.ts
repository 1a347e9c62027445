import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/** Where `npm run build` leaves the dashboard's static files (packages/dashboard/dist). */
export function dashboardRoot(): string {
  const manifest = createRequire(import.meta.url).resolve("@paddock/dashboard/package.json");
  return join(dirname(manifest), "dist");
}

// The page loads only its own scripts and styles (Mantine sets inline style attributes, hence
// 'unsafe-inline' for styles alone), talks only to this origin (fetch, EventSource, WebSocket),
// and cannot be framed.
const pageHeaders = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; "),
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};

/**
 * Serves the web dashboard at `/`: index.html (never cached, so a new build shows at once) and
 * its content-hashed assets (cached for a year). One route per built file, no catch-all, so every
 * other path stays the API's; the dashboard's own routes live in the URL fragment.
 */
export async function serveDashboard(app: FastifyInstance, root = dashboardRoot()): Promise<void> {
  if (!existsSync(join(root, "index.html"))) {
    app.get("/", async (_request, reply) =>
      reply
        .type("text/html; charset=utf-8")
        .send(
          '<!doctype html><title>Paddock</title><p>The dashboard is not built. Run <code>npm run build</code> (or <code>make setup</code>) in the checkout and restart the server. The API is up: see <a href="/docs">/docs</a>.</p>',
        ),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: "/",
    wildcard: false,
    index: "index.html",
    cacheControl: false,
    setHeaders(reply, path) {
      const asset = path.includes(`${join(root, "assets")}/`);
      reply.header("cache-control", asset ? "public, max-age=31536000, immutable" : "no-cache");
      reply.headers(pageHeaders);
    },
  });
}
