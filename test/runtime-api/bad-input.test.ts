import { startTestServer, type TestServer } from "@paddock/server/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const image = { uri: "paddock/base:bookworm" };
const entrypoint = ["sleep", "infinity"];

/** [method, path, body (object → JSON, string → raw), expected status, expected code] */
type Case = [string, string, unknown, number, string];

describe("the /v1 API answers bad input with a 4xx and a stable code", () => {
  let t: TestServer;
  let id: string;

  beforeAll(async () => {
    t = await startTestServer({ config: { docker: { allowed_host_paths: ["/srv/paddock-allowed"] } } });
    const created = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({ image, entrypoint }),
    });
    id = ((await created.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const cases = (): Case[] => [
    ["POST", "/v1/sandboxes", "{not json", 400, "invalid_json"],
    ["POST", "/v1/sandboxes", [], 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint, timeout: "soon" }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint, timeout: 0 }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint, timeout: 10 ** 9 }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image: { uri: "x", tag: "y" }, entrypoint }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint, metadata: { "not a key": "v" } }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint, metadata: { k: "not a value!" } }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint, metadata: { k: 1 } }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint, resourceLimits: { cpu: "lots" } }, 400, "invalid_request"],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, resourceLimits: { memory: "12 parsecs" } },
      400,
      "invalid_request",
    ],
    ["POST", "/v1/sandboxes", { image, entrypoint, resourceLimits: { gpu: "1" } }, 400, "gpu_unavailable"],
    ["POST", "/v1/sandboxes", { image: { uri: "../../etc/passwd" }, entrypoint }, 400, "invalid_image"],
    ["POST", "/v1/sandboxes", { image: { uri: "debian?x=1" }, entrypoint }, 400, "invalid_image"],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint: ["a", "b", "c"].map((letter) => letter.repeat(128 * 1024)) },
      400,
      "invalid_request",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint: Array.from({ length: 40 }, () => "x".repeat(16 * 1024)) },
      400,
      "invalid_request",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, env: { A: "a".repeat(128 * 1024), B: "b".repeat(128 * 1024) } },
      400,
      "invalid_request",
    ],
    ["POST", "/v1/sandboxes", { image, snapshotId: "snap-x", entrypoint }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { entrypoint }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes", { image, entrypoint: [] }, 400, "invalid_request"],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, networkPolicy: { egress: [{ action: "maybe", target: "a.b" }] } },
      400,
      "invalid_request",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, platform: { os: "linux", arch: "arm64" } },
      400,
      "invalid_request",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, volumes: [{ name: "Bad_Name", mountPath: "/x", host: { path: "/etc" } }] },
      400,
      "invalid_request",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, volumes: [{ name: "etc", mountPath: "/x", host: { path: "/etc" } }] },
      400,
      "host_path_not_allowed",
    ],
    [
      "POST",
      "/v1/sandboxes",
      {
        image,
        entrypoint,
        volumes: [{ name: "up", mountPath: "/x", host: { path: "/srv/paddock-allowed/../../etc" } }],
      },
      400,
      "host_path_not_allowed",
    ],
    [
      "POST",
      "/v1/sandboxes",
      { image, entrypoint, credentialProxy: { enabled: true } },
      400,
      "invalid_request",
    ],
    ["POST", "/v1/sandboxes", { snapshotId: "snap-does-not-exist" }, 404, "snapshot_not_found"],
    ["GET", "/v1/sandboxes?page=0", undefined, 400, "invalid_request"],
    ["GET", "/v1/sandboxes?pageSize=100000", undefined, 400, "invalid_request"],
    ["GET", "/v1/sandboxes?page=abc", undefined, 400, "invalid_request"],
    ["GET", "/v1/sandboxes?color=blue", undefined, 400, "invalid_request"],
    ["GET", "/v1/sandboxes/sbx-unknown", undefined, 404, "sandbox_not_found"],
    ["DELETE", "/v1/sandboxes/sbx-unknown", undefined, 404, "sandbox_not_found"],
    ["POST", "/v1/sandboxes/sbx-unknown/pause", undefined, 404, "sandbox_not_found"],
    ["POST", "/v1/sandboxes/sbx-unknown/resume", undefined, 404, "sandbox_not_found"],
    ["POST", `/v1/sandboxes/${id}/resume`, undefined, 409, "invalid_state"],
    ["POST", `/v1/sandboxes/${id}/renew-expiration`, {}, 400, "invalid_request"],
    ["POST", `/v1/sandboxes/${id}/renew-expiration`, { expiresAt: "tomorrow" }, 400, "invalid_request"],
    [
      "POST",
      `/v1/sandboxes/${id}/renew-expiration`,
      { expiresAt: "2020-01-01T00:00:00Z" },
      400,
      "invalid_request",
    ],
    [
      "POST",
      `/v1/sandboxes/${id}/renew-expiration`,
      { expiresAt: new Date(Date.now() + 60_000).toISOString(), extra: 1 },
      400,
      "invalid_request",
    ],
    ["PATCH", `/v1/sandboxes/${id}/metadata`, [1, 2], 400, "invalid_request"],
    ["PATCH", `/v1/sandboxes/${id}/metadata`, { k: 5 }, 400, "invalid_request"],
    ["PATCH", `/v1/sandboxes/${id}/metadata`, { "opensandbox.io/x": "y" }, 400, "invalid_request"],
    ["PATCH", "/v1/sandboxes/sbx-unknown/metadata", { k: "v" }, 404, "sandbox_not_found"],
    ["POST", `/v1/sandboxes/${id}/snapshots`, { name: "" }, 400, "invalid_request"],
    ["POST", `/v1/sandboxes/${id}/snapshots`, { label: "x" }, 400, "invalid_request"],
    ["POST", "/v1/sandboxes/sbx-unknown/snapshots", {}, 404, "sandbox_not_found"],
    ["GET", "/v1/snapshots/snap-unknown", undefined, 404, "snapshot_not_found"],
    ["DELETE", "/v1/snapshots/snap-unknown", undefined, 404, "snapshot_not_found"],
    ["GET", "/v1/snapshots?pageSize=0", undefined, 400, "invalid_request"],
    ["GET", `/v1/sandboxes/${id}/endpoints/70000`, undefined, 400, "invalid_request"],
    ["GET", `/v1/sandboxes/${id}/endpoints/http`, undefined, 400, "invalid_request"],
    ["GET", "/v1/sandboxes/sbx-unknown/endpoints/80", undefined, 404, "sandbox_not_found"],
    ["GET", `/v1/sandboxes/${id}/diagnostics/logs`, undefined, 400, "invalid_request"],
    ["GET", `/v1/sandboxes/${id}/diagnostics/moods?scope=all`, undefined, 400, "invalid_request"],
    ["GET", "/v1/nowhere", undefined, 404, "not_found"],
    // Text that is not Unicode: a lone surrogate escape in JSON (sent as written), a query escape.
    [
      "POST",
      "/v1/sandboxes",
      '{"image":{"uri":"paddock/base:bookworm"},"entrypoint":["sleep","\\ud800"]}',
      400,
      "invalid_unicode",
    ],
    [
      "POST",
      "/v1/sandboxes",
      '{"image":{"uri":"paddock/base:bookworm"},"entrypoint":["sleep","infinity"],"env":{"A":"\\udc00"}}',
      400,
      "invalid_unicode",
    ],
    ["PATCH", `/v1/sandboxes/${id}/metadata`, '{"k":"\\ud800"}', 400, "invalid_unicode"],
    ["GET", "/v1/sandboxes?metadata=k%3D%FF", undefined, 400, "invalid_unicode"],
  ];

  test("each malformed request gets its status and code, and changes nothing", async () => {
    const mismatches: string[] = [];
    for (const [method, path, body, status, code] of cases()) {
      const response = await t.api(path, {
        method,
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
        ...(typeof body === "string" ? { headers: { "content-type": "application/json" } } : {}),
      });
      const answer = (await response.json()) as { code: string; message: string };
      if (response.status !== status || answer.code !== code || !answer.message) {
        mismatches.push(
          `${method} ${path} ${JSON.stringify(body)} → ${response.status} ${answer.code}: ${answer.message}`,
        );
      }
    }
    expect(mismatches).toEqual([]);
    const { items } = (await (await t.api("/v1/sandboxes")).json()) as { items: Array<{ id: string }> };
    expect(items.map((item) => item.id)).toEqual([id]);
  });

  test("a merge patch or a body whose bytes are not UTF-8 is refused as not Unicode", async () => {
    const answers = [];
    for (const [type, body] of [
      ["application/merge-patch+json", Buffer.from('{"k":"\\ud800"}')],
      ["application/merge-patch+json", Buffer.from([...Buffer.from('{"k":"'), 0xff, ...Buffer.from('"}')])],
      ["application/json", Buffer.from([...Buffer.from('{"k":"'), 0xc3, ...Buffer.from('"}')])],
    ] as const) {
      const response = await t.api(`/v1/sandboxes/${id}/metadata`, {
        method: "PATCH",
        body,
        headers: { "content-type": type },
      });
      answers.push([response.status, ((await response.json()) as { code: string }).code]);
    }
    expect(answers).toEqual(answers.map(() => [400, "invalid_unicode"]));
  });

  test("a create at the entrypoint and env limits starts", async () => {
    // 3 × 80 KiB of arguments, and two variables of 128 KiB - 1 with their names (MAX_ARG_STRLEN).
    const argument = "a".repeat(80 * 1024);
    const env = Object.fromEntries(["V1", "V2"].map((name) => [name, "e".repeat(128 * 1024 - 4)]));
    const response = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({
        image,
        entrypoint: ["sh", "-c", "sleep infinity", argument, argument, argument],
        env,
      }),
    });
    const created = (await response.json()) as { id: string; status: { state: string } };
    try {
      expect([response.status, created.status?.state]).toEqual([202, "Running"]);
    } finally {
      if (created.id) await t.api(`/v1/sandboxes/${created.id}`, { method: "DELETE" });
    }
  });

  test("wrong content types and oversized bodies", async () => {
    const text = await t.api("/v1/sandboxes", {
      method: "POST",
      body: "image=x",
      headers: { "content-type": "text/plain" },
    });
    expect([text.status, ((await text.json()) as { code: string }).code]).toEqual([
      415,
      "unsupported_media_type",
    ]);
    const huge = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({ image, entrypoint, env: { BIG: "x".repeat(2 * 1024 * 1024) } }),
    });
    expect([huge.status, ((await huge.json()) as { code: string }).code]).toEqual([413, "payload_too_large"]);
  });

  test("random bodies, ids and headers never produce a 5xx", async () => {
    const routes = [
      ["POST", "/v1/sandboxes"],
      ["PATCH", "/v1/sandboxes/{id}/metadata"],
      ["POST", "/v1/sandboxes/{id}/renew-expiration"],
      ["POST", "/v1/sandboxes/{id}/snapshots"],
      ["GET", "/v1/sandboxes/{id}/endpoints/{port}"],
      ["GET", "/v1/sandboxes/{id}"],
      ["GET", "/v1/snapshots/{id}"],
      ["GET", "/v1/sandboxes/{id}/diagnostics/logs?scope={scope}"],
      ["GET", "/v1/sandboxes?state={scope}&metadata={scope}"],
    ] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.jsonValue({ maxDepth: 3 }),
        fc.oneof(fc.string({ maxLength: 40 }), fc.constant(id)),
        fc.string({ maxLength: 12 }),
        fc.oneof(fc.integer({ min: -5, max: 70_000 }).map(String), fc.string({ maxLength: 6 })),
        fc.dictionary(
          fc.constantFrom("content-type", "accept", "x-request-id", "range"),
          fc.string({ maxLength: 30 }),
          { maxKeys: 2 },
        ),
        async ([method, template], body, sandboxId, scope, port, headers) => {
          const path = template
            .replace("{id}", encodeURIComponent(sandboxId) || "x")
            .replace("{port}", encodeURIComponent(port) || "1")
            .replaceAll("{scope}", encodeURIComponent(scope));
          // Never a valid create: random bodies must not start real sandboxes.
          if (
            method === "POST" &&
            template === "/v1/sandboxes" &&
            typeof body === "object" &&
            body &&
            "image" in body
          )
            return;
          const response = await t
            .api(path, {
              method,
              ...(method === "GET" ? {} : { body: JSON.stringify(body) }),
              headers: { ...(method === "GET" ? {} : { "content-type": "application/json" }), ...headers },
            })
            .catch((error: Error) => ({ status: 0, error }));
          expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(200);
          expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        },
      ),
      { numRuns: 300 },
    );
  });
});
