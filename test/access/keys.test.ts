/**
 * API keys across surfaces: a scoped key reaches only its scope's routes (403 `scope_forbidden`
 * elsewhere), table-driven from the routes the server registered; an expired, rotated or deleted
 * key and a logged-out session are refused at once on every surface, a moment after each was
 * used (so answered from the credential cache, decision 0100).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "@paddock/db";
import type { RegisteredRoute } from "@paddock/server";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { type PaddockProcess, serve, stop, writeServerConfig } from "../support/paddock-process.js";
import { openEventStream, send, upgradeStatus } from "../support/raw-http.js";
import { callApi } from "../support/user.js";

type Json = any;
type Scope = "sandboxes" | "memory" | "secrets";

/**
 * Who may call a route: a key of one scope (or an unscoped key or session), only the account
 * itself (`account`: sessions and unscoped keys), the operator's key (`operator`), any account
 * credential (`mcp`, whose tools follow the scope), or anyone (`public`: no account credential,
 * or one of its own such as a signed link, so never a 403 for a key's scope). First match wins;
 * a route none matches fails the test.
 */
const access: Array<[RegExp, Scope | "account" | "operator" | "mcp" | "public"]> = [
  [/^\S+ \/v1\/sandboxes\/:sandboxId\/diagnostics\/:kind\/content$/, "public"],
  [/^\S+ \/v1\//, "operator"],
  [/^\S+ \/e2b\/health$/, "public"],
  [/^PUT \/e2b\/templates\/:templateID\/files\/:hash$/, "public"],
  [/^\S+ \/e2b\//, "sandboxes"],
  [/^\S+ \/mcp$/, "mcp"],
  [/^\S+ \/sandboxes\/:id\/ports\//, "public"],
  [/^\S+ \/sandboxes\/:id\/ports\/:port$/, "public"],
  [/^\S+ \/(sandboxes|volumes|templates)(\/|$)/, "sandboxes"],
  [/^\S+ \/memory(\/|$)/, "memory"],
  [/^\S+ \/secrets(\/|$)/, "secrets"],
  [/^\S+ \/(keys|usage|payments|audit)(\/|$)/, "account"],
  [/^\S+ \/auth\/(me|logout)$/, "account"],
  [/^\S+ \/billing\/(checkout|plans)$/, "account"],
  [/^\S+ \/auth\/(login|signup)$/, "public"],
  [/^\S+ \/billing\/webhook$/, "public"],
  [/^\S+ \/(health|docs|openapi\.json|index\.html|favicon\.svg|)$/, "public"],
  [/^\S+ \/assets\//, "public"],
];

function accessOf(route: RegisteredRoute) {
  return access.find(([pattern]) => pattern.test(`${route.method} ${route.url}`))?.[1];
}

/** A path for a route with ids of nothing: what a call reaches past authorization is a 404 or 400. */
function pathOf(url: string): string {
  return url
    .replace(/:port/g, "8000")
    .replace(/:hash/g, "a".repeat(64))
    .replace("invoices/:id", "invoices/in_none0")
    .replace(/:kind/g, "logs")
    .replace(/:[A-Za-z]+/g, "none0")
    .replace(/\*$/, "probe");
}

/**
 * One call per surface with a credential: the control plane (a plain read, the sandbox event
 * stream, a WebSocket upgrade), E2B's API and MCP. Each answers its status: for the WebSocket,
 * that of the refused upgrade (404 for the sandbox that does not exist, once authenticated).
 */
async function everySurface(url: string, credential: string) {
  return {
    "GET /sandboxes": (await send(`${url}/sandboxes`, "GET", { authorization: `Bearer ${credential}` }))
      .status,
    "GET /sandboxes/events (SSE)": (
      await send(`${url}/sandboxes/events`, "GET", { authorization: `Bearer ${credential}` })
    ).status,
    "WebSocket /sandboxes/{id}/terminal": await upgradeStatus(
      `${url.replace("http", "ws")}/sandboxes/sbx-none0/terminal`,
      { authorization: `Bearer ${credential}` },
    ),
    "GET /e2b/sandboxes": (await send(`${url}/e2b/sandboxes`, "GET", { "x-api-key": credential })).status,
    "POST /mcp": (
      await send(
        `${url}/mcp`,
        "POST",
        {
          authorization: `Bearer ${credential}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      )
    ).status,
  };
}
const accepted = {
  "GET /sandboxes": 200,
  "GET /sandboxes/events (SSE)": 200,
  "WebSocket /sandboxes/{id}/terminal": 404,
  "GET /e2b/sandboxes": 200,
  "POST /mcp": 200,
};
const refused = Object.fromEntries(Object.keys(accepted).map((name) => [name, 401]));

const scopes: Scope[] = ["sandboxes", "memory", "secrets"];

describe("API keys on every surface", () => {
  let t: TestServer;
  let session: string;

  const call = (method: string, path: string, credential: string, body?: unknown) =>
    callApi(t, credential, method, path, body);
  const newKey = async (options: { scope?: Scope; expiresAt?: string } = {}) => {
    const created = await call("POST", "/keys", session, { name: "k", ...options });
    expect(created.status, created.text).toBe(201);
    return { id: created.body.key.id as string, secret: created.body.secret as string };
  };

  /**
   * A call to a route as the key: its bearer and E2B's header, and for a method that may carry
   * one a body that is not JSON, so a call that gets past authorization stops at parsing (400)
   * and changes nothing.
   */
  const callAs = (route: RegisteredRoute, key: string) => {
    const withBody = ["POST", "PUT", "PATCH", "QUERY"].includes(route.method);
    return send(
      `${t.url}${pathOf(route.url)}`,
      route.method,
      {
        authorization: `Bearer ${key}`,
        "x-api-key": key,
        ...(withBody ? { "content-type": "application/json" } : {}),
      },
      withBody ? "[" : undefined,
    );
  };

  beforeAll(async () => {
    t = await startTestServer();
    session = await t.account("keys-owner@example.com");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("each scope reaches its own routes only: 403 scope_forbidden on every other, on every surface", async () => {
    const routes = t.server.routes;
    expect(
      routes.filter((route) => accessOf(route) === undefined).map((route) => `${route.method} ${route.url}`),
      "routes the access table does not place",
    ).toEqual([]);
    const keys = Object.fromEntries(
      await Promise.all(scopes.map(async (scope) => [scope, (await newKey({ scope })).secret] as const)),
    );
    const wrong: string[] = [];
    let calls = 0;
    for (const route of routes) {
      const rule = accessOf(route) as NonNullable<ReturnType<typeof accessOf>>;
      for (const scope of scopes) {
        calls++;
        const answer = await callAs(route, keys[scope] as string);
        // A HEAD answer has no body to name its code; E2B's answers carry the status as their code.
        const forbidden =
          answer.status === 403 &&
          (route.method === "HEAD" ||
            answer.text.includes(
              route.url.startsWith("/e2b/") ? "this key is limited to" : "scope_forbidden",
            ));
        const expected =
          rule === "operator"
            ? answer.status === 401
            : rule === "public"
              ? answer.status !== 403
              : rule === "mcp" || rule === scope
                ? answer.status !== 401 && answer.status !== 403
                : forbidden;
        if (!expected) wrong.push(`${scope} key: ${route.method} ${route.url} (${rule}): ${answer.status}`);
      }
    }
    expect(wrong).toEqual([]);
    console.log(`scopes: ${routes.length} routes × ${scopes.length} scoped keys = ${calls} calls`);
  }, 120_000);

  test("over MCP a key gets only its scope's tools", async () => {
    const tools = async (credential: string) => {
      const answer = await send(
        `${t.url}/mcp`,
        "POST",
        {
          authorization: `Bearer ${credential}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      );
      const body = JSON.parse(
        answer.text
          .replace(/^(event|data): ?/gm, "")
          .trim()
          .split("\n")
          .at(-1) ?? "{}",
      );
      return (body.result?.tools ?? []).map((tool: { name: string }) => tool.name);
    };
    expect(await tools((await newKey({ scope: "sandboxes" })).secret)).toContain("run_command");
    expect(await tools((await newKey({ scope: "memory" })).secret)).toEqual([]);
    expect(await tools((await newKey({ scope: "secrets" })).secret)).toEqual([]);
  });

  test("a deleted key is refused at once on every surface", async () => {
    const key = await newKey();
    expect(await everySurface(t.url, key.secret)).toEqual(accepted);
    expect((await call("DELETE", `/keys/${key.id}`, session)).status).toBe(204);
    expect(await everySurface(t.url, key.secret)).toEqual(refused);
  });

  test("a rotated key's old secret is refused at once on every surface, its new one accepted", async () => {
    const key = await newKey({ scope: "sandboxes" });
    const scoped = { ...accepted };
    expect(await everySurface(t.url, key.secret)).toEqual(scoped);
    const rotated = await call("POST", `/keys/${key.id}/rotate`, session);
    expect(rotated.status, rotated.text).toBe(200);
    expect(await everySurface(t.url, key.secret)).toEqual(refused);
    expect(await everySurface(t.url, rotated.body.secret)).toEqual(scoped);
  });

  test("an expired key is refused on every surface from its expiry, cached or not", async () => {
    const expiresAt = Date.now() + 3000;
    const key = await newKey({ expiresAt: new Date(expiresAt).toISOString() });
    expect(await everySurface(t.url, key.secret)).toEqual(accepted);
    await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 10));
    expect(await everySurface(t.url, key.secret)).toEqual(refused);
    expect((await call("GET", "/memory", key.secret)).body.code).toBe("key_expired");
  });

  test("a logged-out session is refused at once on every surface", async () => {
    const other = await t.account("keys-logout@example.com");
    expect(await everySurface(t.url, other)).toEqual(accepted);
    expect((await call("POST", "/auth/logout", other)).status).toBe(204);
    expect(await everySurface(t.url, other)).toEqual(refused);
  });

  test("an open event stream and terminal end when their key is deleted, a session's streams at its logout", async () => {
    const key = await newKey();
    const created = await call("POST", "/sandboxes", session, { template: "python", timeout: 600 });
    expect(created.status, created.text).toBe(201);
    const events = await openEventStream(`${t.url}/sandboxes/events`, key.secret);
    const terminal = new WebSocket(`${t.url.replace("http", "ws")}/sandboxes/${created.body.id}/terminal`, {
      headers: { authorization: `Bearer ${key.secret}` },
    });
    await new Promise((resolve, reject) => terminal.once("open", resolve).once("error", reject));
    const terminalClosed = new Promise((resolve) => terminal.once("close", () => resolve("ended")));
    // Still open a moment later: only the revocation ends them.
    expect(await events.by(500)).toBe("open");
    expect((await call("DELETE", `/keys/${key.id}`, session)).status).toBe(204);
    expect(await events.by(5000)).toBe("ended");
    expect(
      await Promise.race([terminalClosed, new Promise((resolve) => setTimeout(() => resolve("open"), 5000))]),
    ).toBe("ended");

    const other = await t.account("keys-stream-logout@example.com");
    const own = await openEventStream(`${t.url}/sandboxes/events`, other);
    expect((await call("POST", "/auth/logout", other)).status).toBe(204);
    expect(await own.by(5000)).toBe("ended");
  }, 60_000);
});

/**
 * Two `paddock serve` replicas on one PostgreSQL: a credential used on replica 2 (so in its
 * cache) and revoked on replica 1 is refused by replica 2 as soon as the revocation reaches it
 * over LISTEN/NOTIFY, which the 5 s cache lifetime bounds (decisions 0100, 0145). The message
 * takes a moment to arrive, so replica 2's very next call may come first: the test asserts the
 * bound and reports how long it took.
 */
describe("a revocation on one replica, on the other's cache", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dir: string;
  const replicas: PaddockProcess[] = [];
  let session: string;
  const url = (replica: number) => replicas[replica]?.url ?? "";
  /** Milliseconds from a revocation's answer on replica 1 to replica 2's first refusal. */
  const delays: number[] = [];
  /** Calls replica 2 until it refuses the credential; fails past the cache's 5 s lifetime. */
  const refusedByReplica2 = async (credential: string) => {
    const start = performance.now();
    for (;;) {
      const { status } = await send(`${url(1)}/sandboxes`, "GET", { authorization: `Bearer ${credential}` });
      const elapsed = performance.now() - start;
      if (status === 401) return delays.push(Math.round(elapsed));
      expect(status).toBe(200);
      expect(elapsed, "replica 2 still accepts the revoked credential").toBeLessThan(5000);
    }
  };

  const call = async (replica: number, method: string, path: string, credential?: string, body?: unknown) => {
    const response = await fetch(`${url(replica)}${path}`, {
      method,
      headers: {
        ...(credential ? { authorization: `Bearer ${credential}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text.startsWith("{") ? JSON.parse(text) : text) as Json };
  };
  const login = async (email: string) => {
    const credentials = { email, password: "correct horse battery" };
    await call(0, "POST", "/auth/signup", undefined, credentials);
    return (await call(0, "POST", "/auth/login", undefined, credentials)).body.token as string;
  };
  const newKey = async () => {
    const created = await call(0, "POST", "/keys", session, { name: "replicated" });
    expect(created.status).toBe(201);
    return { id: created.body.key.id as string, secret: created.body.secret as string };
  };

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    dir = mkdtempSync(join(tmpdir(), "paddock-keys-replicas-"));
    const config = writeServerConfig(dir, database.url);
    replicas.push(...(await Promise.all([serve(config.file), serve(config.file)])));
    session = await login("replicated-keys@example.com");
  }, 120_000);
  afterAll(async () => {
    console.log(`replica 2 refused a credential revoked on replica 1 after (ms): ${delays.join(", ")}`);
    await Promise.all(replicas.map((replica) => stop(replica.child, "SIGTERM")));
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a key deleted on replica 1 is refused by replica 2 within the cache's bound, on every surface", async () => {
    const key = await newKey();
    expect(await everySurface(url(1), key.secret)).toEqual(accepted);
    const events = await openEventStream(`${url(1)}/sandboxes/events`, key.secret);
    expect((await call(0, "DELETE", `/keys/${key.id}`, session)).status).toBe(204);
    await refusedByReplica2(key.secret);
    // Its stream open on replica 2 ended with it.
    expect(await events.by(5000)).toBe("ended");
    expect(await everySurface(url(1), key.secret)).toEqual(refused);
  });

  test("a key rotated on replica 1: its old secret refused by replica 2 within the cache's bound, on every surface", async () => {
    const key = await newKey();
    expect(await everySurface(url(1), key.secret)).toEqual(accepted);
    const rotated = await call(0, "POST", `/keys/${key.id}/rotate`, session);
    expect(rotated.status).toBe(200);
    await refusedByReplica2(key.secret);
    expect(await everySurface(url(1), key.secret)).toEqual(refused);
    expect(await everySurface(url(1), rotated.body.secret)).toEqual(accepted);
  });

  test("a session logged out on replica 1 is refused by replica 2 within the cache's bound, on every surface", async () => {
    const other = await login("replicated-logout@example.com");
    expect(await everySurface(url(1), other)).toEqual(accepted);
    expect((await call(0, "POST", "/auth/logout", other)).status).toBe(204);
    await refusedByReplica2(other);
    expect(await everySurface(url(1), other)).toEqual(refused);
  });
});
