import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { generateOpenApi } from "../src/http/openapi.js";
import { type ControlPlaneUnderTest, startControlPlane } from "./harness.js";

// Every operation of the generated OpenAPI document (so a new route is fuzzed without anyone
// listing it) plus the endpoint proxy: random bodies, ids, query values and headers never get a 5xx.
describe("every control-plane route under random input", () => {
  let cp: ControlPlaneUnderTest;
  let token: string;
  let sandboxId: string;
  let operations: Array<[string, string]>;

  beforeAll(async () => {
    cp = await startControlPlane();
    // An unscoped API key, not the session: a fuzzed POST /auth/logout must not end the credential.
    const session = await cp.account("fuzz@example.com");
    token = (await cp.call("POST", "/keys", session, { name: "fuzz" })).body.secret;
    sandboxId = (await cp.call("POST", "/sandboxes", session, { template: "ubuntu", timeout: 600 })).body.id;
    const document = JSON.parse(await generateOpenApi()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => [method.toUpperCase(), path] as [string, string]),
    );
    operations.push(
      ["GET", "/sandboxes/{id}/ports/{port}/{text}/x"],
      ["POST", "/sandboxes/{id}/ports/{port}"],
    );
  });
  afterAll(async () => {
    await cp?.dispose();
  });

  test("code in a language the template lacks is the caller's error, not the sandbox's", async () => {
    // The ubuntu template has no python3: execd's 501 reaches the caller as a 400 with its reason.
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    for (const [path, body] of [
      [`/sandboxes/${sandboxId}/code/contexts`, {}],
      [`/sandboxes/${sandboxId}/code`, { code: "1 + 1" }],
    ] as const) {
      const response = await fetch(`${cp.url}${path}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      expect(response.status, path).toBe(400);
      expect(await response.json()).toMatchObject({
        code: "language_unavailable",
        detail: expect.stringContaining("no Python"),
      });
    }
  });

  test("no 5xx", async () => {
    expect(operations.length).toBeGreaterThan(25);
    // Destructive operations get random ids only, so the one real sandbox stays up for the rest.
    const seen = new Map<number, number>();
    const destructive = /^(DELETE \/sandboxes\/\{id\}|POST \/sandboxes\/\{id\}\/pause)$/;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...operations),
        fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 40 })),
        fc.oneof(fc.string({ maxLength: 30 }), fc.constant("real")),
        fc.oneof(fc.integer({ min: -1, max: 70_000 }), fc.constant(8080)),
        fc.string({ maxLength: 20 }),
        fc.record(
          {
            authorization: fc.oneof(
              { weight: 6, arbitrary: fc.constant(`Bearer ${token}`) },
              { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
            ),
            "content-type": fc.oneof(
              { weight: 6, arbitrary: fc.constant("application/json") },
              {
                weight: 3,
                arbitrary: fc.constantFrom(
                  "text/plain",
                  "application/octet-stream",
                  "multipart/form-data; boundary=x",
                  "application/json; charset=utf-16",
                ),
              },
            ),
            accept: fc.constantFrom("application/json", "application/octet-stream", "*/*"),
            range: fc.oneof(fc.constant("bytes=0-3"), fc.string({ maxLength: 12 })),
            "x-paddock-access-token": fc.string({ maxLength: 60 }),
          },
          { requiredKeys: ["authorization"] },
        ),
        fc.constantFrom("", "?path=/tmp/f", "?path={text}&depth={text}&mode={text}", "?state=Running&page=0"),
        async ([method, template], body, id, port, text, headers, query) => {
          const operation = `${method} ${template}`;
          const realId = id === "real" && !destructive.test(operation) ? sandboxId : id === "real" ? "x" : id;
          const path =
            template
              .replace("{id}", encodeURIComponent(realId) || "x")
              .replace("{port}", String(port))
              .replaceAll("{text}", encodeURIComponent(text) || "t") +
            (template.includes("{text}") ? "" : query.replaceAll("{text}", encodeURIComponent(text)));
          const sendsBody = method !== "GET" && method !== "HEAD";
          const response = await fetch(`${cp.url}${path}`, {
            method,
            headers: Object.fromEntries(
              Object.entries(headers).filter(([, value]) => /^[\t\x20-\x7e]*$/.test(value ?? "")),
            ) as Record<string, string>,
            ...(sendsBody ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
          });
          // A change or metrics stream goes on until its client leaves: this one does at once.
          if (response.headers.get("content-type")?.startsWith("text/event-stream"))
            await response.body?.cancel();
          else await response.arrayBuffer();
          seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
          expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        },
      ),
      { numRuns: 500 },
    );
    // The runs got past authentication and validation too, not only refused at the door.
    expect([...seen.keys()]).toEqual(expect.arrayContaining([200, 400, 401, 404]));
  });
});
