import { SseParser } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

type Json = any;

describe.each(["sqlite", "postgres"] as const)("the control plane on %s", (engine) => {
  let t: TestServer;
  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const response = await fetch(`${t.url}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : undefined) as Json,
      text,
    };
  };
  const signupAndLogin = async (email: string) => {
    expect(
      (await call("POST", "/auth/signup", undefined, { email, password: "correct horse battery" })).status,
    ).toBe(201);
    const login = await call("POST", "/auth/login", undefined, { email, password: "correct horse battery" });
    expect(login.status).toBe(200);
    return login.body.token as string;
  };

  beforeAll(async () => {
    t = await startTestServer({ engine });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("accounts: sign up, log in, me, log out", async () => {
    const signup = await call("POST", "/auth/signup", undefined, {
      email: "Ada@Example.com",
      password: "correct horse battery",
    });
    expect(signup.status).toBe(201);
    expect(signup.body).toMatchObject({ email: "ada@example.com", plan: "free" });
    expect(signup.text).not.toContain("correct horse");
    expect(
      (
        await call("POST", "/auth/signup", undefined, {
          email: "ada@example.com",
          password: "another password",
        })
      ).body,
    ).toMatchObject({ code: "email_taken" });
    expect(
      (await call("POST", "/auth/signup", undefined, { email: "not-an-email", password: "long enough" }))
        .status,
    ).toBe(400);
    expect(
      (await call("POST", "/auth/signup", undefined, { email: "b@example.com", password: "short" })).status,
    ).toBe(400);

    const wrong = await call("POST", "/auth/login", undefined, {
      email: "ada@example.com",
      password: "wrong password",
    });
    expect([wrong.status, wrong.body.code]).toEqual([401, "invalid_credentials"]);
    const login = await call("POST", "/auth/login", undefined, {
      email: "ada@example.com",
      password: "correct horse battery",
    });
    expect(login.status).toBe(200);
    expect(login.headers.get("set-cookie")).toMatch(/^paddock_session=ps_.*HttpOnly/);
    const token = login.body.token;
    expect((await call("GET", "/auth/me", token)).body).toMatchObject({ email: "ada@example.com" });
    expect((await call("POST", "/auth/logout", token)).status).toBe(204);
    expect((await call("GET", "/auth/me", token)).status).toBe(401);
  });

  test("login attempts are rate limited per email", async () => {
    await call("POST", "/auth/signup", undefined, {
      email: "limit@example.com",
      password: "correct horse battery",
    });
    // Login failures are counted in windows of the clock's minutes (decision 0170): the seven
    // attempts must fall in one, not straddle its end.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push(
        (await call("POST", "/auth/login", undefined, { email: "limit@example.com", password: "guess" }))
          .status,
      );
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429]);
  });

  test("API keys: shown once, scoped, expiring, rotated, deleted", async () => {
    const session = await signupAndLogin("keys@example.com");
    const created = await call("POST", "/keys", session, { name: "ci" });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    expect(secret.startsWith(created.body.key.prefix)).toBe(true);
    const listed = await call("GET", "/keys", session);
    expect(listed.body.items).toHaveLength(1);
    expect(listed.text).not.toContain(secret);
    expect((await call("GET", "/sandboxes", secret)).status).toBe(200);

    const scoped = await call("POST", "/keys", session, { scope: "memory" });
    const refused = await call("GET", "/sandboxes", scoped.body.secret);
    expect([refused.status, refused.body.code]).toEqual([403, "scope_forbidden"]);
    expect((await call("GET", "/keys", scoped.body.secret)).status).toBe(403);

    expect((await call("POST", "/keys", session, { expiresAt: "2001-01-01T00:00:00Z" })).status).toBe(400);
    const soon = await call("POST", "/keys", session, {
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await call("GET", "/sandboxes", soon.body.secret)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const expired = await call("GET", "/sandboxes", soon.body.secret);
    expect([expired.status, expired.body.code]).toEqual([401, "key_expired"]);

    const rotated = await call("POST", `/keys/${created.body.key.id}/rotate`, session);
    expect(rotated.body.secret).not.toBe(secret);
    expect((await call("GET", "/sandboxes", secret)).status).toBe(401);
    expect((await call("GET", "/sandboxes", rotated.body.secret)).status).toBe(200);
    expect((await call("DELETE", `/keys/${created.body.key.id}`, session)).status).toBe(204);
    expect((await call("GET", "/sandboxes", rotated.body.secret)).status).toBe(401);
    expect((await call("DELETE", `/keys/${created.body.key.id}`, session)).body).toMatchObject({
      code: "key_not_found",
    });
  });

  test("sandboxes: create from a template, run, stream, metadata, pause, renew, delete; others see nothing", async () => {
    const owner = await signupAndLogin("owner@example.com");
    const stranger = await signupAndLogin("stranger@example.com");
    expect(
      (await call("GET", "/sandboxes/templates", owner)).body.items.map((item: Json) => item.id),
    ).toEqual(expect.arrayContaining(["python", "node", "ubuntu"]));
    const created = await call("POST", "/sandboxes", owner, {
      template: "python",
      timeout: 600,
      env: { GREETING: "hello" },
      metadata: { team: "a" },
      // Paused, it refuses commands below instead of resuming for them.
      lifecycle: { autoResume: false },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ state: "Running", template: "python", metadata: { team: "a" } });
    const id = created.body.id;

    const ran = await call("POST", `/sandboxes/${id}/run`, owner, {
      command: "echo $GREETING; python3 -c 'print(6*7)'; echo oops >&2; exit 4",
    });
    expect(ran.body).toEqual({ stdout: "hello\n42\n", stderr: "oops\n", exitCode: 4 });

    const stream = await fetch(`${t.url}/sandboxes/${id}/run/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "for i in 1 2 3; do echo $i; done" }),
    });
    const parser = new SseParser();
    const events = parser.push(await stream.text()).concat(parser.end());
    expect(events.map((event) => event.type)).toEqual(
      ["init", expect.any(String), expect.any(String), expect.any(String), "execution_complete"].slice(
        0,
        events.length,
      ),
    );
    expect(
      events
        .filter((event) => event.type === "stdout")
        .map((event) => event.text)
        .join(""),
    ).toBe("1\n2\n3\n");
    expect(events.at(-1)?.type).toBe("execution_complete");

    expect(
      (await call("PATCH", `/sandboxes/${id}/metadata`, owner, { team: null, stage: "dev" })).body.metadata,
    ).toEqual({ stage: "dev" });
    expect(
      (await call("GET", "/sandboxes?metadata=stage%3Ddev", owner)).body.items.map((item: Json) => item.id),
    ).toEqual([id]);
    const renewed = await call("POST", `/sandboxes/${id}/renew`, owner, { timeout: 3600 });
    expect(Date.parse(renewed.body.expiresAt)).toBeGreaterThan(Date.now() + 3_500_000);
    expect((await call("POST", `/sandboxes/${id}/pause`, owner)).status).toBe(200);

    // Another account: every route answers 404, and its list is empty.
    for (const [method, path, body] of [
      ["GET", `/sandboxes/${id}`],
      ["DELETE", `/sandboxes/${id}`],
      ["POST", `/sandboxes/${id}/pause`],
      ["POST", `/sandboxes/${id}/resume`],
      ["POST", `/sandboxes/${id}/renew`, { timeout: 60 }],
      ["PATCH", `/sandboxes/${id}/metadata`, { x: "y" }],
      ["POST", `/sandboxes/${id}/run`, { command: "id" }],
      ["POST", `/sandboxes/${id}/run/stream`, { command: "id" }],
      ["POST", `/sandboxes/${id}/files/read`, { path: "/etc/hostname" }],
      ["POST", `/sandboxes/${id}/files/write`, { path: "/tmp/x", content: "x" }],
      ["POST", `/sandboxes/${id}/files/move`, { from: "/tmp/x", to: "/tmp/y" }],
      ["POST", `/sandboxes/${id}/files/search`, { path: "/" }],
      ["GET", `/sandboxes/${id}/files/list?path=/`],
      ["GET", `/sandboxes/${id}/files/download?path=/etc/hostname`],
      ["DELETE", `/sandboxes/${id}/files?path=/tmp/x`],
      ["POST", `/sandboxes/${id}/directories`, { path: "/tmp/d" }],
      ["POST", `/sandboxes/${id}/code`, { code: "1" }],
      ["POST", `/sandboxes/${id}/code/contexts`, { language: "python" }],
      ["GET", `/sandboxes/${id}/endpoints/8080`],
    ] as Array<[string, string, unknown?]>) {
      const answer = await call(method, path, stranger, body);
      expect([answer.status, answer.body?.code], `${method} ${path}`).toEqual([404, "sandbox_not_found"]);
    }
    expect((await call("GET", "/sandboxes", stranger)).body.items).toEqual([]);

    await expect.poll(async () => (await call("GET", `/sandboxes/${id}`, owner)).body.state).toBe("Paused");
    const notRunning = await call("POST", `/sandboxes/${id}/run`, owner, { command: "true" });
    expect(notRunning.status).toBe(409);
    expect((await call("DELETE", `/sandboxes/${id}`, owner)).status).toBe(204);
    expect((await call("GET", `/sandboxes/${id}`, owner)).status).toBe(404);
  });

  test("serves its OpenAPI document and a reference page", async () => {
    const document = await call("GET", "/openapi.json");
    expect(document.body.info.title).toBe("Paddock control plane");
    expect(Object.keys(document.body.paths)).toContain("/sandboxes/{id}/run");
    expect(Object.keys(document.body.paths).some((path) => path.startsWith("/v1"))).toBe(false);
    const page = await fetch(`${t.url}/docs`);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain("/openapi.json");
  });

  test("errors are {code, detail}; bad input is a 4xx", async () => {
    const token = await signupAndLogin("errors@example.com");
    const cases: Array<[string, string, unknown, number, string]> = [
      ["POST", "/sandboxes", { template: "cobol" }, 404, "template_not_found"],
      ["POST", "/sandboxes", { template: "python", timeout: -1 }, 400, "invalid_request"],
      ["POST", "/sandboxes", { template: "python", cpu: 4 }, 400, "invalid_request"],
      ["POST", "/sandboxes", { template: "python", metadata: { "bad key": "x" } }, 400, "invalid_request"],
      ["POST", "/sandboxes/sbx-x/run", { command: "" }, 400, "invalid_request"],
      ["POST", "/keys", { scope: "everything" }, 400, "invalid_request"],
      ["GET", "/sandboxes?pageSize=0", undefined, 400, "invalid_request"],
      ["GET", "/sandboxes/nope", undefined, 404, "sandbox_not_found"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const answer = await call(method, path, token, body);
      expect([answer.status, answer.body.code, typeof answer.body.detail], `${method} ${path}`).toEqual([
        status,
        code,
        "string",
      ]);
    }
    expect((await call("GET", "/sandboxes")).body).toMatchObject({
      code: "unauthorized",
      detail: expect.any(String),
    });
    expect((await call("GET", "/sandboxes", "pk_forged")).status).toBe(401);
  });
});
