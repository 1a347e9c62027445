/**
 * The audit log (decision 0204) against a live server (real Docker, gVisor): every event type
 * comes from the action that should make it, with its actor and target; the log is the caller's
 * account's only, filtered and paged; limit refusals are throttled; and no secret value, key,
 * password or token ever reaches the table or an answer of GET /audit.
 */
import { randomBytes } from "node:crypto";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { Paddock } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FakeStripe, webhookEvent, webhookSignature } from "../support/fake-stripe.js";
import { callApi } from "../support/user.js";

const password = `pw-${randomBytes(8).toString("hex")}`;
const secretValue = `SECRET-VALUE-${randomBytes(12).toString("hex")}`;
const webhookSecret = `whsec_${randomBytes(24).toString("base64url")}`;

interface Event {
  id: string;
  at: string;
  type: string;
  actor: { kind: string; id: string | null; name: string | null; address: string | null };
  target: { type: string; id: string | null; name: string | null } | null;
  details: Record<string, unknown>;
}

describe("the audit log", () => {
  let t: TestServer;
  let stripe: FakeStripe;
  let stripeKey: string;
  /** Every text that must never reach the log: the password, tokens, keys, the secret's value. */
  const forbidden: string[] = [password, secretValue];
  /** Every answer of GET /audit seen. */
  const answers: string[] = [];
  let session: string;
  let key: { id: string; secret: string };
  let sandboxId: string;
  let bobSession: string;
  const spareKeys: string[] = [];

  const call = (token: string, method: string, path: string, body?: unknown) =>
    callApi(t, token, method, path, body);
  const post = (path: string, body: unknown) =>
    fetch(`${t.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const audit = async (token: string, query = "") => {
    const answer = await call(token, "GET", `/audit${query}`);
    answers.push(answer.text);
    return answer;
  };
  /** Every event of the account, newest first, read page by page. */
  const allEvents = async (token: string, query = ""): Promise<Event[]> => {
    const events: Event[] = [];
    let cursor: string | null = null;
    do {
      const page = await audit(token, `?limit=4${query}${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status, page.text).toBe(200);
      events.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    return events;
  };

  beforeAll(async () => {
    stripe = await FakeStripe.start();
    stripeKey = stripe.addAccount("merchant");
    forbidden.push(stripeKey);
    t = await startTestServer({
      config: {
        plans: { free_max_sandboxes: 1, free_max_api_keys: 3 },
        rate_limits: { commands_per_key: 2 },
        payments: { stripe_api_base: stripe.url },
        billing: {
          stripe_secret_key: stripe.addAccount("platform", { prices: ["price_pro"] }),
          stripe_webhook_secret: webhookSecret,
          stripe_api_base: stripe.url,
          pro_price_id: "price_pro",
          success_url: "https://app.example.com/billing/done",
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.dispose();
    await stripe?.stop();
  });

  test("each action records its event, with who did it, from where, and to what", async () => {
    expect((await post("/auth/signup", { email: "alice@example.com", password })).status).toBe(201);
    expect(
      (await post("/auth/login", { email: "alice@example.com", password: "wrong password" })).status,
    ).toBe(401);
    // An unknown email names no account: nothing is recorded anywhere.
    expect((await post("/auth/login", { email: "nobody@example.com", password })).status).toBe(401);
    const login = await post("/auth/login", { email: "alice@example.com", password });
    session = ((await login.json()) as { token: string }).token;
    forbidden.push(session);
    bobSession = await t.account("bob@example.com");
    forbidden.push(bobSession);

    const created = await call(session, "POST", "/keys", { name: "ci" });
    expect(created.status).toBe(201);
    const rotated = await call(session, "POST", `/keys/${created.body.key.id}/rotate`);
    key = { id: created.body.key.id, secret: rotated.body.secret };
    forbidden.push(created.body.secret, rotated.body.secret);
    const spare = await call(session, "POST", "/keys", { name: "spare" });
    forbidden.push(spare.body.secret);
    expect((await call(session, "DELETE", `/keys/${spare.body.key.id}`)).status).toBe(204);

    expect((await call(key.secret, "POST", "/secrets", { name: "DB_PASSWORD", value: "first" })).status).toBe(
      201,
    );
    expect(
      (await call(key.secret, "POST", "/secrets", { name: "DB_PASSWORD", value: secretValue })).status,
    ).toBe(200);
    const sandbox = await call(key.secret, "POST", "/sandboxes", {
      template: "python",
      timeout: 600,
      secrets: { DB_PASSWORD: "DB_PASSWORD" },
    });
    expect(sandbox.status, sandbox.text).toBe(201);
    sandboxId = sandbox.body.id;
    // Past the plan's one sandbox, three times: one limit event.
    for (let i = 0; i < 3; i++)
      expect((await call(key.secret, "POST", "/sandboxes", { template: "python" })).body.code).toBe(
        "quota_exceeded",
      );
    expect((await call(key.secret, "DELETE", `/sandboxes/${sandboxId}`)).status).toBe(204);
    expect((await call(key.secret, "DELETE", "/secrets/DB_PASSWORD")).status).toBe(204);
    // Commands past the key's rate, on a sandbox that is gone: refused before they are looked at.
    const commands = [];
    for (let i = 0; i < 7; i++)
      commands.push(
        (await call(key.secret, "POST", `/sandboxes/${sandboxId}/run`, { command: "true" })).status,
      );
    expect(commands.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1);
    // API keys past the plan's three, twice: one limit event.
    for (const name of ["third", "fourth"]) {
      const answer = await call(session, "POST", "/keys", { name });
      expect(answer.status).toBe(201);
      forbidden.push(answer.body.secret);
      spareKeys.push(answer.body.key.id);
    }
    for (let i = 0; i < 2; i++) expect((await call(session, "POST", "/keys", {})).status).toBe(403);

    // A build whose steps are refused still makes its template, with a failed build.
    const refused = await call(key.secret, "POST", "/templates/broken/builds", {
      from: "no-such-base",
      steps: [],
    });
    expect(refused.body.code).toBe("invalid_template_build");
    expect((await call(key.secret, "DELETE", "/templates/broken")).status).toBe(204);
    const built = await call(key.secret, "POST", "/templates/tiny/builds", {
      from: "ubuntu",
      steps: [{ type: "RUN", command: "true" }],
    });
    expect(built.status, built.text).toBe(202);
    let build = built.body.build;
    while (["waiting", "building"].includes(build.status)) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      build = (await call(key.secret, "GET", `/templates/tiny/builds/${build.id}`)).body;
    }
    expect(build.status).toBe("ready");

    expect((await call(session, "PUT", "/payments/credentials", { secretKey: stripeKey })).status).toBe(200);
    const agent = await call(session, "POST", "/payments/agent-key", {
      allowedOperations: ["list_customers"],
      currency: "usd",
      maxAmount: 100,
    });
    expect(agent.status, agent.text).toBe(201);
    forbidden.push(agent.body.key);
    expect((await call(session, "DELETE", "/payments/agent-key")).status).toBe(204);
    expect((await call(session, "DELETE", "/payments/credentials")).status).toBe(204);

    const accountId = (await call(session, "GET", "/auth/me")).body.id as string;
    const paid = webhookEvent("checkout.session.completed", {
      id: "cs_test_audit",
      object: "checkout.session",
      mode: "subscription",
      status: "complete",
      payment_status: "paid",
      client_reference_id: accountId,
      customer: "cus_audit",
      subscription: "sub_audit",
      metadata: { account_id: accountId },
    });
    const delivered = await fetch(`${t.url}/billing/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "stripe-signature": webhookSignature(paid, webhookSecret),
      },
      body: paid,
    });
    expect(delivered.status).toBe(200);

    const events = await allEvents(session);
    const types = events.map((event) => event.type).reverse();
    expect(types).toEqual([
      "account.signed_up",
      "auth.login_failed",
      "auth.login_succeeded",
      "key.created",
      "key.rotated",
      "key.created",
      "key.deleted",
      "secret.created",
      "secret.updated",
      "sandbox.created",
      "limit.hit",
      "sandbox.deleted",
      "secret.deleted",
      "limit.hit",
      "key.created",
      "key.created",
      "limit.hit",
      "template.created",
      "template.build_failed",
      "template.deleted",
      "template.created",
      "template.build_started",
      "template.build_succeeded",
      "payments.credentials_set",
      "payments.agent_key_issued",
      "payments.agent_key_revoked",
      "payments.credentials_deleted",
      "plan.changed",
    ]);
    const one = (type: string) => events.find((event) => event.type === type) as Event;
    expect(one("account.signed_up").actor).toEqual({
      kind: "anonymous",
      id: null,
      name: null,
      address: "127.0.0.1",
    });
    expect(one("auth.login_failed").actor.kind).toBe("password");
    expect(one("key.rotated").target).toEqual({ type: "key", id: key.id, name: "ci" });
    expect(one("key.rotated").actor).toMatchObject({ kind: "session", address: "127.0.0.1" });
    expect(one("key.deleted").target).toEqual({ type: "key", id: spare.body.key.id, name: "spare" });
    expect(one("sandbox.created")).toMatchObject({
      actor: { kind: "key", id: key.id, name: "ci", address: "127.0.0.1" },
      target: { type: "sandbox", id: sandboxId },
      details: { template: "python" },
    });
    expect(one("sandbox.deleted").target?.id).toBe(sandboxId);
    expect(one("secret.updated").target).toEqual({ type: "secret", id: null, name: "DB_PASSWORD" });
    const limits = events.filter((event) => event.type === "limit.hit").map((event) => event.target?.name);
    expect(limits.sort()).toEqual(["api_keys", "commands_rate", "sandboxes"]);
    expect(one("template.build_failed")).toMatchObject({
      actor: { kind: "system" },
      target: { type: "template", name: "broken" },
    });
    expect(one("template.build_succeeded").details.build).toBe(build.id);
    expect(one("plan.changed")).toMatchObject({
      actor: { kind: "billing" },
      details: { from: "free", to: "pro" },
    });

    // A logout is the last thing the session does.
    expect((await call(session, "POST", "/auth/logout")).status).toBe(204);
    const after = await t.server.stack.database.db
      .selectFrom("audit_events")
      .select("type")
      .where("account_id", "=", accountId)
      .orderBy("seq", "desc")
      .executeTakeFirstOrThrow();
    expect(after.type).toBe("auth.logged_out");
    // The unknown email's failed login was recorded nowhere.
    const failures = await t.server.stack.database.db
      .selectFrom("audit_events")
      .select("account_id")
      .where("type", "=", "auth.login_failed")
      .execute();
    expect(failures).toEqual([{ account_id: accountId }]);
    session = (
      (await (await post("/auth/login", { email: "alice@example.com", password })).json()) as {
        token: string;
      }
    ).token;
    forbidden.push(session);
  }, 300_000);

  test("sandboxes created and deleted through E2B's API are recorded too", async () => {
    const created = await fetch(`${t.url}/e2b/sandboxes`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key.secret },
      body: JSON.stringify({ templateID: "python", timeout: 300 }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { sandboxID } = (await created.json()) as { sandboxID: string };
    const deleted = await fetch(`${t.url}/e2b/sandboxes/${sandboxID}`, {
      method: "DELETE",
      headers: { "x-api-key": key.secret },
    });
    expect(deleted.status).toBe(204);
    const events = (await audit(session, `?target=${sandboxID}`)).body.items as Event[];
    expect(
      events.map((event) => [event.type, event.actor.kind, event.actor.id, event.details.surface]),
    ).toEqual([
      ["sandbox.deleted", "key", key.id, "e2b"],
      ["sandbox.created", "key", key.id, "e2b"],
    ]);
  }, 120_000);

  test("filters by type (exact or prefix), time and target; pages never repeat or skip", async () => {
    const everything = await allEvents(session);
    const keyEvents = (await audit(session, "?type=key.")).body.items as Event[];
    expect(new Set(keyEvents.map((event) => event.type))).toEqual(
      new Set(["key.created", "key.rotated", "key.deleted"]),
    );
    expect(((await audit(session, "?type=key.created")).body.items as Event[]).length).toBe(4);
    // The SDK speaks the same filters and pages.
    const client = new Paddock({ baseUrl: t.url, apiKey: session });
    const firstPage = await client.audit.list({ type: "key.", limit: 2 });
    expect(firstPage.items.map((event) => event.id)).toEqual(keyEvents.slice(0, 2).map((event) => event.id));
    const nextPage = await client.audit.list({ type: "key.", limit: 2, cursor: firstPage.nextCursor ?? "" });
    expect(nextPage.items[0]?.id).toBe(keyEvents[2]?.id);
    const bySandbox = (await audit(session, `?target=${sandboxId}`)).body.items as Event[];
    expect(bySandbox.map((event) => event.type)).toEqual(["sandbox.deleted", "sandbox.created"]);
    const middle = everything[10] as Event;
    const since = (await allEvents(session, `&since=${encodeURIComponent(middle.at)}`)).map(
      (event) => event.id,
    );
    const until = (await allEvents(session, `&until=${encodeURIComponent(middle.at)}`)).map(
      (event) => event.id,
    );
    expect(since).toContain(middle.id);
    expect(until).not.toContain(middle.id);
    expect(new Set([...since, ...until])).toEqual(new Set(everything.map((event) => event.id)));
    expect(new Set(everything.map((event) => event.id)).size).toBe(everything.length);
    expect((await audit(session, "?since=2999-01-01T00:00:00Z")).body.items).toEqual([]);

    for (const query of [
      "?since=yesterday",
      "?since=2024-06-30T23:59:60Z",
      "?until=2024-02-30T00:00:00Z",
      "?cursor=9999999999999999",
      "?type=KEY",
      "?limit=0",
      "?limit=201",
      "?cursor=abc",
      "?other=1",
    ]) {
      const answer = await audit(session, query);
      expect([answer.status, answer.body.code], query).toEqual([400, "invalid_request"]);
    }
    expect((await call("pk_nonsense", "GET", "/audit")).status).toBe(401);
  });

  test("another account sees only its own events, and never by another's target id", async () => {
    const bobs = await allEvents(bobSession);
    expect(bobs.map((event) => event.type).reverse()).toEqual(["account.signed_up", "auth.login_succeeded"]);
    expect((await audit(bobSession, `?target=${sandboxId}`)).body.items).toEqual([]);
    // A key scoped to sandboxes is not the account's manager: the audit log is refused to it.
    expect((await call(session, "DELETE", `/keys/${spareKeys[0]}`)).status).toBe(204);
    const scoped = await call(session, "POST", "/keys", { name: "scoped", scope: "sandboxes" });
    expect(scoped.status).toBe(201);
    forbidden.push(scoped.body.secret);
    expect((await audit(scoped.body.secret)).status).toBe(403);
  });

  test("the table and every answer of GET /audit hold no password, token, key or secret value", async () => {
    const rows = await t.server.stack.database.db.selectFrom("audit_events").selectAll().execute();
    expect(rows.length).toBeGreaterThan(25);
    const table = JSON.stringify(rows);
    expect(answers.length).toBeGreaterThan(10);
    for (const text of forbidden.filter(Boolean)) {
      expect(table.includes(text), `the table holds ${text.slice(0, 6)}…`).toBe(false);
      expect(
        answers.some((answer) => answer.includes(text)),
        `an answer holds ${text.slice(0, 6)}…`,
      ).toBe(false);
    }
    // Deleting what they name left the rows in place, and the database refuses to remove them.
    await expect(t.server.stack.database.db.deleteFrom("audit_events").execute()).rejects.toThrow(
      /append-only/,
    );
  });
});
