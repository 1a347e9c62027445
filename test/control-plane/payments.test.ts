import { Writable } from "node:stream";
import { createLogger } from "@paddock/common";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { Paddock, PaddockError, PaymentOperations } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FakeStripe } from "../support/fake-stripe.js";
import { callApi } from "../support/user.js";

// Bring-your-own-key payments through the SDK against a real server on both engines. The users'
// Stripe accounts live in the local fake; assertions look at what it received and with which key.

async function caught(promise: Promise<unknown>): Promise<PaddockError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof PaddockError)) throw new Error(`expected a PaddockError, got ${String(error)}`);
  return error;
}

async function refusal(promise: Promise<unknown>): Promise<[number, string]> {
  const error = await caught(promise);
  return [error.status, error.code];
}

describe.each(["sqlite", "postgres"] as const)("payments on %s", (engine) => {
  let stripe: FakeStripe;
  let t: TestServer;
  const logLines: string[] = [];
  let owner: Paddock;
  let ownerKey: string;
  let stranger: Paddock;
  let strangerKey: string;

  const login = async (email: string) => {
    await Paddock.signup(email, "correct horse battery", { baseUrl: t.url });
    return (await Paddock.login(email, "correct horse battery", { baseUrl: t.url })).client;
  };
  const sent = () => stripe.requests.length;
  const raw = (method: string, path: string, token: string, body?: unknown) =>
    callApi(t, token, method, path, body);

  beforeAll(async () => {
    stripe = await FakeStripe.start();
    ownerKey = stripe.addAccount("owner");
    strangerKey = stripe.addAccount("stranger");
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    t = await startTestServer({
      engine,
      config: { payments: { stripe_api_base: stripe.url } },
      logger: createLogger({ level: "trace", destination }),
    });
    owner = await login("merchant@example.com");
    stranger = await login("stranger@example.com");
  });
  afterAll(async () => {
    await t?.dispose();
    await stripe?.stop();
  });

  test("credentials: verified with Stripe, refused keys store nothing, masked on the way out, sealed at rest, deleted", async () => {
    expect(await refusal(owner.payments.credentials.get())).toEqual([404, "payment_credentials_not_found"]);
    expect(await refusal(owner.payments.customers.list())).toEqual([409, "payments_not_connected"]);

    // Not a Stripe key at all: refused before Stripe is asked.
    const before = sent();
    for (const bad of [
      "",
      "pk_test_abcdefgh1234",
      "sk_test_short",
      "sk_prod_abcdefgh12345678",
      "sk_test_abc defgh1234",
    ]) {
      expect(await refusal(owner.payments.credentials.set(bad)), bad).toEqual([400, "invalid_request"]);
    }
    expect(sent()).toBe(before);

    // Well-formed but unknown to Stripe: Stripe is asked, refuses, nothing is stored.
    const unknown = `sk_test_${"0".repeat(24)}`;
    expect(await refusal(owner.payments.credentials.set(unknown))).toEqual([
      400,
      "payment_credentials_invalid",
    ]);
    expect(stripe.requests.at(-1)).toMatchObject({
      method: "GET",
      path: "/v1/balance",
      key: unknown,
      status: 401,
    });
    expect(await refusal(owner.payments.credentials.get())).toEqual([404, "payment_credentials_not_found"]);

    const stored = await owner.payments.credentials.set(ownerKey);
    expect(stored).toEqual({
      provider: "stripe",
      maskedKey: `sk_test_…${ownerKey.slice(-4)}`,
      livemode: false,
      createdAt: expect.any(String),
      updatedAt: stored.createdAt,
    });
    expect(stripe.requests.at(-1)).toMatchObject({ path: "/v1/balance", key: ownerKey, status: 200 });
    expect(await owner.payments.credentials.get()).toEqual(stored);
    const answer = await raw(
      "GET",
      "/payments/credentials",
      (await owner.keys.create({ name: "raw" })).secret,
    );
    expect(answer.text).not.toContain(ownerKey.slice(8));

    // At rest: ciphertext only, neither the key nor its secret part.
    const row = await t.server.stack.database.db
      .selectFrom("payment_credentials")
      .selectAll()
      .where("account_id", "=", (await owner.me()).id)
      .executeTakeFirstOrThrow();
    expect(row.sealed_key).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(ownerKey.slice(8));

    // Deleting forgets it; the operations stop reaching Stripe.
    await owner.payments.credentials.delete();
    expect(await refusal(owner.payments.credentials.get())).toEqual([404, "payment_credentials_not_found"]);
    expect(await refusal(owner.payments.credentials.delete())).toEqual([
      404,
      "payment_credentials_not_found",
    ]);
    const quiet = sent();
    expect(await refusal(owner.payments.customers.create({ name: "x" }))).toEqual([
      409,
      "payments_not_connected",
    ]);
    expect(sent()).toBe(quiet);

    // Stored again for the tests below; a replacement keeps createdAt.
    const again = await owner.payments.credentials.set(ownerKey);
    expect(await owner.payments.credentials.set(ownerKey)).toMatchObject({ createdAt: again.createdAt });
  });

  test("the owner creates customers, invoices and payment links on its own Stripe account", async () => {
    const customer = await owner.payments.customers.create({
      email: "client@example.com",
      name: "Client Ltd",
      metadata: { ref: "42" },
    });
    expect(customer).toMatchObject({
      email: "client@example.com",
      name: "Client Ltd",
      metadata: { ref: "42" },
    });
    expect(customer.id).toMatch(/^cus_/);
    expect(stripe.account("owner").customers[0]).toMatchObject({ id: customer.id, name: "Client Ltd" });
    expect(stripe.requests.at(-1)).toMatchObject({ method: "POST", path: "/v1/customers", key: ownerKey });
    expect(stripe.requests.at(-1)?.idempotencyKey).toBeTruthy();

    const draft = await owner.payments.invoices.create({
      customer: customer.id,
      currency: "usd",
      lineItems: [
        { description: "Consulting", unitAmount: 15000, quantity: 2 },
        { description: "Setup", unitAmount: 5000 },
      ],
    });
    expect(draft).toMatchObject({
      customer: customer.id,
      status: "draft",
      currency: "usd",
      total: 35000,
      amountDue: 35000,
      hostedInvoiceUrl: null,
      lineItems: [
        { description: "Consulting", quantity: 2, amount: 30000 },
        { description: "Setup", quantity: 1, amount: 5000 },
      ],
    });
    const finalized = await owner.payments.invoices.finalize(draft.id);
    expect(finalized).toMatchObject({ id: draft.id, status: "open", total: 35000 });
    expect(finalized.hostedInvoiceUrl).toContain(draft.id);
    expect(finalized.dueDate).not.toBeNull();
    expect(await refusal(owner.payments.invoices.finalize(draft.id))).toEqual([
      400,
      "payment_provider_rejected",
    ]);

    const link = await owner.payments.paymentLinks.create({
      currency: "eur",
      lineItems: [{ name: "E-book", unitAmount: 900 }],
    });
    expect(link).toMatchObject({ active: true, currency: "eur" });
    expect(link.url).toMatch(/^https:\/\/buy\.stripe\.com\//);
    expect(stripe.account("owner").paymentLinks[0]?.line_items_requested).toEqual([
      {
        price_data: { currency: "eur", unit_amount: "900", product_data: { name: "E-book" } },
        quantity: "1",
      },
    ]);

    expect((await owner.payments.invoices.list({ customer: customer.id })).items.map((i) => i.id)).toEqual([
      draft.id,
    ]);
    expect((await owner.payments.paymentLinks.list()).items.map((l) => l.id)).toEqual([link.id]);
    // Pages: newest first, `startingAfter` continues.
    const second = await owner.payments.customers.create({ name: "Second" });
    const first = await owner.payments.customers.list({ limit: 1 });
    expect(first).toEqual({ items: [second], hasMore: true });
    const rest = await owner.payments.customers.list({ limit: 1, startingAfter: second.id });
    expect(rest.items.map((c) => c.id)).toEqual([customer.id]);
    expect(rest.hasMore).toBe(false);
  });

  test("an agent key acts on the owner's Stripe account within its limits; beyond them nothing reaches Stripe", async () => {
    expect(await refusal(owner.payments.agentKey.get())).toEqual([404, "agent_key_not_found"]);
    const issued = await owner.payments.agentKey.create({
      allowedOperations: ["create_customer", "create_invoice", "create_payment_link", "finalize_invoice"],
      currency: "usd",
      maxAmount: 10_000,
      totalLimit: 15_000,
    });
    expect(issued.key).toMatch(/^pak_/);
    expect(issued).toMatchObject({ amountUsed: 0, totalLimit: 15_000, lastUsedAt: null });
    expect(issued.key.startsWith(issued.prefix)).toBe(true);
    const { key: _key, ...info } = issued;
    expect(await owner.payments.agentKey.get()).toEqual(info);
    const keyRow = await t.server.stack.database.db.selectFrom("payment_agent_keys").selectAll().execute();
    expect(JSON.stringify(keyRow)).not.toContain(issued.key);

    // What an agent in a sandbox has: the agent key and the server's address.
    const agent = PaymentOperations.forAgent({ apiKey: issued.key, baseUrl: t.url });
    const customer = await agent.customers.create({ email: "buyer@example.com" });
    expect(stripe.requests.at(-1)).toMatchObject({ path: "/v1/customers", key: ownerKey, account: "owner" });
    expect(stripe.account("owner").customers[0]?.id).toBe(customer.id);

    const invoice = await agent.invoices.create({
      customer: customer.id,
      currency: "usd",
      lineItems: [{ description: "Work", unitAmount: 2500, quantity: 4 }],
      finalize: true,
    });
    expect(invoice).toMatchObject({ status: "open", total: 10_000 });
    expect(stripe.account("owner").invoices[0]).toMatchObject({
      id: invoice.id,
      status: "open",
      total: 10_000,
    });
    const ownerCalls = stripe.requests.filter((r) => r.key === ownerKey && r.path.startsWith("/v1/invoice"));
    expect(ownerCalls.length).toBeGreaterThanOrEqual(3);

    const link = await agent.paymentLinks.create({
      currency: "usd",
      lineItems: [{ name: "Sticker", unitAmount: 500 }],
    });
    expect(stripe.account("owner").paymentLinks[0]?.id).toBe(link.id);
    expect(await owner.payments.agentKey.get()).toMatchObject({
      amountUsed: 10_500,
      lastUsedAt: expect.any(String),
    });

    // Refusals, each before any request to Stripe.
    const before = sent();
    expect(await refusal(agent.customers.list())).toEqual([403, "agent_operation_not_allowed"]);
    expect(await refusal(agent.invoices.list())).toEqual([403, "agent_operation_not_allowed"]);
    expect(await refusal(agent.paymentLinks.list())).toEqual([403, "agent_operation_not_allowed"]);
    expect(
      await refusal(
        agent.invoices.create({
          customer: customer.id,
          currency: "usd",
          lineItems: [{ description: "Too much", unitAmount: 5001, quantity: 2 }],
        }),
      ),
    ).toEqual([403, "agent_amount_over_limit"]);
    expect(
      await refusal(
        agent.paymentLinks.create({ currency: "usd", lineItems: [{ name: "Big", unitAmount: 10_001 }] }),
      ),
    ).toEqual([403, "agent_amount_over_limit"]);
    expect(
      await refusal(
        agent.paymentLinks.create({ currency: "gbp", lineItems: [{ name: "Tea", unitAmount: 100 }] }),
      ),
    ).toEqual([403, "agent_currency_not_allowed"]);
    // 10 500 used of 15 000: 5 000 more is over the total cap though under the per-operation cap.
    expect(
      await refusal(
        agent.paymentLinks.create({ currency: "usd", lineItems: [{ name: "Mug", unitAmount: 5000 }] }),
      ),
    ).toEqual([403, "agent_total_limit_reached"]);
    expect(sent()).toBe(before);
    expect((await owner.payments.agentKey.get()).amountUsed).toBe(10_500);

    // Finalizing a draft the owner made: the invoice's total is checked (a read), over the cap nothing changes.
    const big = await owner.payments.invoices.create({
      customer: customer.id,
      currency: "usd",
      lineItems: [{ description: "Big job", unitAmount: 20_000 }],
    });
    const beforeFinalize = sent();
    expect(await refusal(agent.invoices.finalize(big.id))).toEqual([403, "agent_amount_over_limit"]);
    expect(stripe.requests.slice(beforeFinalize).map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /v1/invoices/${big.id}`,
    ]);
    expect(stripe.account("owner").invoices.find((i) => i.id === big.id)?.status).toBe("draft");

    // A provider failure gives back what was counted: 4 500 fits, Stripe fails twice (the call and
    // its one retry, under the same idempotency key), and the total is as before.
    stripe.failNext(500, "api_error", "Something went wrong on Stripe's end.");
    stripe.failNext(500, "api_error", "Something went wrong on Stripe's end.");
    const beforeFailure = sent();
    expect(
      await refusal(
        agent.paymentLinks.create({ currency: "usd", lineItems: [{ name: "Pin", unitAmount: 4500 }] }),
      ),
    ).toEqual([502, "payment_provider_unavailable"]);
    const attempts = stripe.requests.slice(beforeFailure);
    expect(attempts.map((r) => [r.path, r.status])).toEqual([
      ["/v1/payment_links", 500],
      ["/v1/payment_links", 500],
    ]);
    expect(attempts[0]?.idempotencyKey).toBeTruthy();
    expect(attempts[1]?.idempotencyKey).toBe(attempts[0]?.idempotencyKey);
    expect((await owner.payments.agentKey.get()).amountUsed).toBe(10_500);

    // An invoice Stripe fails half-way is removed, and its amount is not counted.
    stripe.failNext(500, "api_error", "Something went wrong on Stripe's end.", "/v1/invoiceitems");
    stripe.failNext(500, "api_error", "Something went wrong on Stripe's end.", "/v1/invoiceitems");
    const draftsBefore = stripe.account("owner").invoices.length;
    expect(
      await refusal(
        agent.invoices.create({
          customer: customer.id,
          currency: "usd",
          lineItems: [{ description: "Half", unitAmount: 1000 }],
        }),
      ),
    ).toEqual([502, "payment_provider_unavailable"]);
    expect(stripe.requests.at(-1)).toMatchObject({ method: "DELETE", status: 200 });
    expect(stripe.account("owner").invoices.length).toBe(draftsBefore);
    expect((await owner.payments.agentKey.get()).amountUsed).toBe(10_500);

    // The agent key reaches nothing but the operations.
    expect((await raw("GET", "/payments/credentials", issued.key)).body).toMatchObject({
      code: "agent_key_forbidden",
    });
    expect((await raw("POST", "/payments/agent-key", issued.key, { ...info })).status).toBe(403);
    expect((await raw("GET", "/sandboxes", issued.key)).status).toBe(401);
    expect((await raw("GET", "/billing/plans", issued.key)).status).toBe(401);
    expect((await raw("GET", "/auth/me", issued.key)).status).toBe(401);

    // Issuing again replaces the key: the old one stops at once, the total starts from zero.
    const rotated = await owner.payments.agentKey.create({
      allowedOperations: ["list_customers"],
      currency: "usd",
      maxAmount: 0,
    });
    expect(rotated).toMatchObject({ amountUsed: 0, totalLimit: null });
    expect(await refusal(agent.customers.create({ name: "late" }))).toEqual([401, "unauthorized"]);
    const next = PaymentOperations.forAgent({ apiKey: rotated.key, baseUrl: t.url });
    expect((await next.customers.list({ limit: 100 })).items.map((c) => c.id)).toContain(customer.id);
    await owner.payments.agentKey.revoke();
    expect(await refusal(next.customers.list())).toEqual([401, "unauthorized"]);
    expect(await refusal(owner.payments.agentKey.revoke())).toEqual([404, "agent_key_not_found"]);

    // Neither key appears in any log line.
    const log = logLines.join("");
    for (const secret of [ownerKey, issued.key, rotated.key]) expect(log).not.toContain(secret);
  });

  test("concurrent agent calls cannot together pass the total cap", async () => {
    const issued = await owner.payments.agentKey.create({
      allowedOperations: ["create_payment_link"],
      currency: "usd",
      maxAmount: 300,
      totalLimit: 1000,
    });
    const agent = PaymentOperations.forAgent({ apiKey: issued.key, baseUrl: t.url });
    const before = stripe.account("owner").paymentLinks.length;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, index) =>
        agent.paymentLinks.create({
          currency: "usd",
          lineItems: [{ name: `Item ${index}`, unitAmount: 300 }],
        }),
      ),
    );
    const refused = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(3);
    for (const outcome of refused) {
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: "agent_total_limit_reached" });
    }
    expect(stripe.account("owner").paymentLinks.length - before).toBe(3);
    expect((await owner.payments.agentKey.get()).amountUsed).toBe(900);
    await owner.payments.agentKey.revoke();
  });

  test("the agent key comes from PADDOCK_PAYMENTS_AGENT_KEY when not passed", async () => {
    const issued = await owner.payments.agentKey.create({
      allowedOperations: ["list_payment_links"],
      currency: "usd",
      maxAmount: 0,
    });
    process.env.PADDOCK_PAYMENTS_AGENT_KEY = issued.key;
    try {
      const agent = PaymentOperations.forAgent({ baseUrl: t.url });
      expect((await agent.paymentLinks.list()).items.length).toBeGreaterThan(0);
    } finally {
      delete process.env.PADDOCK_PAYMENTS_AGENT_KEY;
    }
    expect(() => PaymentOperations.forAgent({ baseUrl: t.url })).toThrowError(/PADDOCK_PAYMENTS_AGENT_KEY/);
    await owner.payments.agentKey.revoke();
  });

  test("tenant isolation: another account sees none of it and cannot reach the owner's Stripe objects", async () => {
    expect(await refusal(stranger.payments.credentials.get())).toEqual([
      404,
      "payment_credentials_not_found",
    ]);
    expect(await refusal(stranger.payments.agentKey.get())).toEqual([404, "agent_key_not_found"]);
    expect(await refusal(stranger.payments.credentials.delete())).toEqual([
      404,
      "payment_credentials_not_found",
    ]);
    expect(await refusal(stranger.payments.customers.list())).toEqual([409, "payments_not_connected"]);

    await stranger.payments.credentials.set(strangerKey);
    expect((await stranger.payments.customers.list()).items).toEqual([]);
    const ownersInvoice = stripe.account("owner").invoices[0]?.id as string;
    const ownersCustomer = stripe.account("owner").customers[0]?.id as string;
    expect(await refusal(stranger.payments.invoices.finalize(ownersInvoice))).toEqual([
      404,
      "payment_resource_not_found",
    ]);
    expect(
      await refusal(
        stranger.payments.invoices.create({
          customer: ownersCustomer,
          currency: "usd",
          lineItems: [{ description: "x", unitAmount: 1 }],
        }),
      ),
    ).toEqual([404, "payment_resource_not_found"]);
    // Every call the stranger made went out with the stranger's key.
    expect(stripe.requests.filter((r) => r.account === "stranger").every((r) => r.key === strangerKey)).toBe(
      true,
    );
    // The owner's key and limits are untouched.
    expect((await owner.payments.credentials.get()).maskedKey).toBe(`sk_test_…${ownerKey.slice(-4)}`);
    expect(stripe.account("stranger").invoices).toEqual([]);
  });

  test("bad input on every route is a 400 with a code, and changes nothing", async () => {
    const token = (await owner.keys.create({ name: "bad-input" })).secret;
    const before = sent();
    const cases: Array<[string, string, unknown]> = [
      ["PUT", "/payments/credentials", {}],
      ["PUT", "/payments/credentials", { secretKey: 42 }],
      ["PUT", "/payments/credentials", { secretKey: "sk_test_abcdefgh1234", extra: true }],
      ["POST", "/payments/agent-key", { allowedOperations: [], currency: "usd", maxAmount: 1 }],
      ["POST", "/payments/agent-key", { allowedOperations: ["refund"], currency: "usd", maxAmount: 1 }],
      [
        "POST",
        "/payments/agent-key",
        { allowedOperations: ["list_customers"], currency: "USD", maxAmount: 1 },
      ],
      [
        "POST",
        "/payments/agent-key",
        { allowedOperations: ["list_customers"], currency: "usd", maxAmount: -1 },
      ],
      ["POST", "/payments/agent-key", { allowedOperations: ["list_customers"], currency: "usd" }],
      [
        "POST",
        "/payments/agent-key",
        { allowedOperations: ["list_customers", "list_customers"], currency: "usd", maxAmount: 1 },
      ],
      ["POST", "/payments/customers", { email: "not an email" }],
      ["POST", "/payments/customers", { name: "x", balance: 100 }],
      ["POST", "/payments/customers", { metadata: { "bad key!": "x" } }],
      ["POST", "/payments/invoices", { customer: "cus_1", currency: "usd", lineItems: [] }],
      [
        "POST",
        "/payments/invoices",
        { customer: "x", currency: "usd", lineItems: [{ description: "a", unitAmount: 1 }] },
      ],
      [
        "POST",
        "/payments/invoices",
        { customer: "cus_1", currency: "usd", lineItems: [{ description: "a", unitAmount: 1.5 }] },
      ],
      [
        "POST",
        "/payments/invoices",
        { customer: "cus_1", currency: "usd", lineItems: [{ description: "a", unitAmount: 1, quantity: 0 }] },
      ],
      ["POST", "/payments/payment-links", { currency: "usd", lineItems: [{ name: "", unitAmount: 1 }] }],
      [
        "POST",
        "/payments/payment-links",
        { currency: "usd", lineItems: [{ name: "a", unitAmount: 100_000_000 }] },
      ],
      ["POST", "/payments/invoices/not-an-invoice/finalize", undefined],
      ["GET", "/payments/customers?limit=0", undefined],
      ["GET", "/payments/invoices?status=lost", undefined],
      ["GET", "/payments/payment-links?active=maybe", undefined],
    ];
    for (const [method, path, body] of cases) {
      const answer = await raw(method, path, token, body);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(answer.body.code, `${method} ${path}`).toBe("invalid_request");
    }
    expect(sent()).toBe(before);
    expect(await refusal(owner.payments.agentKey.get())).toEqual([404, "agent_key_not_found"]);

    // Wrong credentials: a scoped key, no key, an unknown agent key.
    const scoped = new Paddock({
      baseUrl: t.url,
      apiKey: (await owner.keys.create({ scope: "secrets" })).secret,
    });
    expect(await refusal(scoped.payments.customers.list())).toEqual([403, "scope_forbidden"]);
    expect(await refusal(scoped.payments.credentials.get())).toEqual([403, "scope_forbidden"]);
    expect((await raw("GET", "/payments/customers", "")).status).toBe(401);
    expect((await raw("GET", "/payments/customers", "pak_unknown")).status).toBe(401);
    expect(sent()).toBe(before);
  });

  test("a key Stripe no longer accepts turns into 400 payment_credentials_invalid on the next call", async () => {
    const key = stripe.addAccount("short-lived");
    const client = await login("short@example.com");
    await client.payments.credentials.set(key);
    stripe.revokeKey(key);
    expect(await refusal(client.payments.customers.list())).toEqual([400, "payment_credentials_invalid"]);
  });
});
