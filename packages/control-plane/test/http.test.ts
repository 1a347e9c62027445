import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type ControlPlaneUnderTest, startControlPlane } from "./harness.js";

// The plugin mounted on a bare Fastify instance: its validation and error rendering hold without
// anything from the host server.
describe("the control plane's HTTP edges", () => {
  let cp: ControlPlaneUnderTest;
  let token: string;
  beforeAll(async () => {
    cp = await startControlPlane();
    token = await cp.account("edges@example.com");
  });
  afterAll(async () => {
    await cp?.dispose();
  });

  test("bad JSON 400, wrong content type 415, big body 413, unknown route 404, extra field 400", async () => {
    const cases: Array<[string, string, string | undefined, Record<string, string>, number, string]> = [
      ["POST", "/sandboxes", "{not json", {}, 400, "invalid_json"],
      [
        "POST",
        "/sandboxes",
        "template=python",
        { "content-type": "text/plain" },
        415,
        "unsupported_media_type",
      ],
      ["POST", "/keys", JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) }), {}, 413, "payload_too_large"],
      ["GET", "/no/such/route", undefined, {}, 404, "not_found"],
      ["POST", "/sandboxes", JSON.stringify({ template: "python", cpu: 4 }), {}, 400, "invalid_request"],
      [
        "POST",
        "/sandboxes",
        JSON.stringify({ template: "python", timeout: "60" }),
        {},
        400,
        "invalid_request",
      ],
    ];
    for (const [method, path, body, headers, status, code] of cases) {
      const answer = await cp.call(method, path, token, body, headers);
      expect([answer.status, answer.body?.code, typeof answer.body?.detail], `${method} ${path}`).toEqual([
        status,
        code,
        "string",
      ]);
    }
  });

  test("sessions: the cookie authenticates like the bearer token, and logout ends both at once", async () => {
    const credentials = { email: "cookie@example.com", password: "correct horse battery" };
    await cp.call("POST", "/auth/signup", undefined, credentials);
    const login = await fetch(`${cp.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(credentials),
    });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    expect(login.headers.get("set-cookie")).toMatch(/HttpOnly/);
    expect((await cp.call("GET", "/auth/me", undefined, undefined, { cookie })).body.email).toBe(
      credentials.email,
    );
    const session = ((await login.json()) as { token: string }).token;
    expect((await cp.call("POST", "/auth/logout", session)).status).toBe(204);
    expect((await cp.call("GET", "/auth/me", undefined, undefined, { cookie })).status).toBe(401);
  });
  // Last: it leaves this client address rate-limited.
  test("a rate-limited login answers 429 rate_limited with Retry-After; the limit is per email and per address", async () => {
    await cp.account("slow@example.com");
    // Login failures are counted in windows of the clock's minutes (decision 0170): the 39
    // attempts below must fall in one, not straddle its end.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 35_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    const attempt = (email: string, password = "wrong guess") =>
      cp.call("POST", "/auth/login", undefined, { email, password });
    for (let i = 0; i < 5; i++) expect((await attempt("slow@example.com")).status).toBe(401);
    const limited = await attempt("slow@example.com");
    expect([limited.status, limited.body.code]).toEqual([429, "rate_limited"]);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Even the right password waits out the window.
    expect((await attempt("slow@example.com", "correct horse battery")).status).toBe(429);

    // Per address: failures on many emails from one client address are cut off too (30 a minute;
    // the guesses above were on an account this address had logged in to, so they count apart).
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push((await attempt(`spray${i}@example.com`)).status);
    expect(statuses).toEqual([...Array(30).fill(401), 429, 429]);
  });
});
