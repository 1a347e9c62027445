import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { generateErrorsDoc, generateOpenApi } from "./openapi.js";

const root = join(import.meta.dirname, "../../../..");

describe("generated documents are committed and current", () => {
  test("openapi/control-plane.json matches the route schemas (run `npm run openapi -w @paddock/control-plane`)", async () => {
    expect(readFileSync(join(root, "openapi/control-plane.json"), "utf8")).toBe(await generateOpenApi());
  });

  test("docs/errors.md lists every registry code", () => {
    expect(readFileSync(join(root, "docs/errors.md"), "utf8")).toBe(generateErrorsDoc());
  });

  test("the document covers every control-plane route built so far", async () => {
    const paths = Object.keys(JSON.parse(await generateOpenApi()).paths as object);
    for (const path of [
      "/auth/signup",
      "/auth/login",
      "/auth/me",
      "/auth/logout",
      "/keys",
      "/keys/{id}",
      "/keys/{id}/rotate",
      "/sandboxes",
      "/sandboxes/{id}",
      "/sandboxes/{id}/run",
      "/sandboxes/{id}/run/stream",
      "/sandboxes/templates",
      "/sandboxes/events",
      "/sandboxes/{id}/metrics",
      "/sandboxes/{id}/metrics/watch",
      "/sandboxes/{id}/diagnostics/logs",
      "/sandboxes/{id}/diagnostics/events",
      "/sandboxes/{id}/files/read",
      "/sandboxes/{id}/code",
      "/secrets",
      "/secrets/{name}",
      "/memory",
      "/memory/search",
      "/memory/{id}",
      "/usage",
      "/usage/sandboxes",
      "/billing/plans",
      "/billing/checkout",
      "/billing/webhook",
      "/payments/credentials",
      "/payments/agent-key",
      "/payments/customers",
      "/payments/invoices",
      "/payments/invoices/{id}/finalize",
      "/payments/payment-links",
    ]) {
      expect(paths).toContain(path);
    }
  });
});
