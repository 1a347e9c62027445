import { randomBytes } from "node:crypto";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { Paddock, PaddockError } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FakeStripe, webhookEvent, webhookSignature } from "../support/fake-stripe.js";

// Billing through the SDK against a real server on both engines; Stripe's API is the local fake,
// webhook events are built here and signed with Stripe's algorithm (HMAC-SHA256 of `t.body`).

const webhookSecret = `whsec_${randomBytes(24).toString("base64url")}`;
const proPrice = "price_pro_monthly";

async function caught(promise: Promise<unknown>): Promise<PaddockError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof PaddockError)) throw new Error(`expected a PaddockError, got ${String(error)}`);
  return error;
}

describe.each(["sqlite", "postgres"] as const)("billing on %s", (engine) => {
  let stripe: FakeStripe;
  let platformKey: string;
  let t: TestServer;
  let client: Paddock;
  let token: string;
  let accountId: string;

  const post = (payload: string, headers: Record<string, string>) =>
    fetch(`${t.url}/billing/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: payload,
    });
  const deliver = async (payload: string) => {
    const response = await post(payload, { "stripe-signature": webhookSignature(payload, webhookSecret) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const planOf = async (id: string) =>
    (
      await t.server.stack.database.db
        .selectFrom("accounts")
        .select("plan")
        .where("id", "=", id)
        .executeTakeFirstOrThrow()
    ).plan;

  beforeAll(async () => {
    stripe = await FakeStripe.start();
    platformKey = stripe.addAccount("platform", { prices: [proPrice] });
    t = await startTestServer({
      engine,
      config: {
        plans: { free_minutes: 0.5 },
        billing: {
          stripe_secret_key: platformKey,
          stripe_webhook_secret: webhookSecret,
          stripe_api_base: stripe.url,
          pro_price_id: proPrice,
          success_url: "https://app.example.com/billing/done",
        },
      },
    });
    await Paddock.signup("buyer@example.com", "correct horse battery", { baseUrl: t.url });
    const login = await Paddock.login("buyer@example.com", "correct horse battery", { baseUrl: t.url });
    client = login.client;
    token = login.session.token;
    accountId = (await client.me()).id;
  });
  afterAll(async () => {
    await t?.dispose();
    await stripe?.stop();
  });

  test("plans list the offer and the account's place in it", async () => {
    const plans = await client.billing.plans();
    expect(plans.items.map((plan) => plan.id)).toEqual(["free", "pro"]);
    // The Free plan's minutes as this server enforces them ([plans] free_minutes).
    expect(plans.items[0]).toMatchObject({ name: "Free", priceCents: 0, includedMinutes: 0.5 });
    expect(plans.items[1]).toMatchObject({
      name: "Pro",
      priceCents: 2000,
      currency: "usd",
      includedMinutes: null,
    });
    expect(plans.current).toEqual({ plan: "free", subscriptionStatus: null });
    expect(plans.checkoutAvailable).toBe(true);
  });

  test("checkout → signed webhook → Pro; a replay changes nothing; a later checkout reuses the customer", async () => {
    const session = await client.billing.checkout("pro");
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toBe(`https://checkout.stripe.com/c/pay/${session.id}`);
    const created = stripe.account("platform").checkoutSessions[0];
    expect(created).toMatchObject({
      id: session.id,
      mode: "subscription",
      client_reference_id: accountId,
      customer: null,
      customer_email: "buyer@example.com",
      metadata: { account_id: accountId, plan: "pro" },
      subscription_data: { metadata: { account_id: accountId, plan: "pro" } },
      line_items_requested: [{ price: proPrice, quantity: "1" }],
      success_url: "https://app.example.com/billing/done",
      cancel_url: `${t.url}/?checkout=cancel`,
    });
    const request = stripe.requests.find((r) => r.path === "/v1/checkout/sessions");
    expect(request?.key).toBe(platformKey);
    expect(await planOf(accountId)).toBe("free");

    // Stripe's customer exists once the buyer pays; the completed session names it.
    const customer = stripe.addCustomer("platform", "buyer@example.com");
    const completed = webhookEvent("checkout.session.completed", {
      ...created,
      status: "complete",
      payment_status: "paid",
      customer,
      subscription: "sub_first",
    });
    expect(await deliver(completed)).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(await planOf(accountId)).toBe("pro");
    expect((await client.billing.plans()).current).toEqual({ plan: "pro", subscriptionStatus: "active" });
    expect((await client.usage.get()).plan.id).toBe("pro");

    // Stripe delivers at least once: the same event again is acknowledged and ignored.
    const rows = async () =>
      t.server.stack.database.db
        .selectFrom("billing_events")
        .selectAll()
        .where("account_id", "=", accountId)
        .execute();
    const before = await rows();
    await t.server.stack.database.db
      .updateTable("accounts")
      .set({ plan: "free" })
      .where("id", "=", accountId)
      .execute();
    expect(await deliver(completed)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(await planOf(accountId)).toBe("free");
    expect(await rows()).toEqual(before);
    await t.server.stack.database.db
      .updateTable("accounts")
      .set({ plan: "pro" })
      .where("id", "=", accountId)
      .execute();

    // Already subscribed: no second subscription.
    const again = await caught(client.billing.checkout("pro"));
    expect([again.status, again.code]).toEqual([409, "already_subscribed"]);
    expect(stripe.account("platform").checkoutSessions).toHaveLength(1);

    // Payment failure: Pro kept while Stripe retries, marked past_due; invoice.paid restores active.
    const invoice = (status: string) => ({
      id: `in_${randomBytes(6).toString("hex")}`,
      object: "invoice",
      customer,
      status,
      parent: {
        type: "subscription_details",
        subscription_details: { subscription: "sub_first", metadata: {} },
      },
    });
    expect((await deliver(webhookEvent("invoice.payment_failed", invoice("open")))).status).toBe(200);
    expect((await client.billing.plans()).current).toEqual({ plan: "pro", subscriptionStatus: "past_due" });
    expect((await deliver(webhookEvent("invoice.paid", invoice("paid")))).status).toBe(200);
    expect((await client.billing.plans()).current).toEqual({ plan: "pro", subscriptionStatus: "active" });

    // A deletion of some other subscription of the customer changes nothing.
    const otherDeleted = webhookEvent("customer.subscription.deleted", {
      id: "sub_other",
      object: "subscription",
      customer,
      status: "canceled",
      metadata: {},
    });
    expect((await deliver(otherDeleted)).status).toBe(200);
    expect(await planOf(accountId)).toBe("pro");

    // The subscription ends: back to Free; a late invoice.paid for it does not bring Pro back.
    const deleted = webhookEvent("customer.subscription.deleted", {
      id: "sub_first",
      object: "subscription",
      customer,
      status: "canceled",
      metadata: { account_id: accountId },
    });
    expect(await deliver(deleted)).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(await planOf(accountId)).toBe("free");
    expect((await client.billing.plans()).current).toEqual({ plan: "free", subscriptionStatus: "canceled" });
    expect((await deliver(webhookEvent("invoice.paid", invoice("paid")))).status).toBe(200);
    expect(await planOf(accountId)).toBe("free");

    // Subscribing again reuses the Stripe customer rather than creating another.
    const second = await client.billing.checkout("pro");
    expect(stripe.account("platform").checkoutSessions[0]).toMatchObject({
      id: second.id,
      customer,
      customer_email: null,
    });
  });

  test("the same event delivered several times at once is applied once", async () => {
    await Paddock.signup("racer@example.com", "correct horse battery", { baseUrl: t.url });
    const racer = (await Paddock.login("racer@example.com", "correct horse battery", { baseUrl: t.url }))
      .client;
    const racerId = (await racer.me()).id;
    const completed = webhookEvent("checkout.session.completed", {
      id: "cs_test_race",
      object: "checkout.session",
      mode: "subscription",
      payment_status: "paid",
      client_reference_id: racerId,
      customer: "cus_race",
      subscription: "sub_race",
      metadata: { account_id: racerId },
    });
    const answers = await Promise.all(Array.from({ length: 6 }, () => deliver(completed)));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers.filter((answer) => answer.body.duplicate === false)).toHaveLength(1);
    expect(await planOf(racerId)).toBe("pro");
    const db = t.server.stack.database.db;
    expect(
      await db.selectFrom("billing_events").select("event_id").where("account_id", "=", racerId).execute(),
    ).toHaveLength(1);
  });

  test("an unpaid checkout waits for invoice.paid; subscription updates follow Stripe's status", async () => {
    await Paddock.signup("slow@example.com", "correct horse battery", { baseUrl: t.url });
    const slow = (await Paddock.login("slow@example.com", "correct horse battery", { baseUrl: t.url }))
      .client;
    const slowId = (await slow.me()).id;
    const session = {
      id: "cs_test_slow",
      object: "checkout.session",
      mode: "subscription",
      payment_status: "unpaid",
      client_reference_id: slowId,
      customer: "cus_slow",
      subscription: "sub_slow",
      metadata: {},
    };
    expect((await deliver(webhookEvent("checkout.session.completed", session))).status).toBe(200);
    expect((await slow.billing.plans()).current).toEqual({ plan: "free", subscriptionStatus: "incomplete" });
    const paid = webhookEvent("invoice.paid", {
      id: "in_slow",
      object: "invoice",
      customer: "cus_slow",
      parent: {
        type: "subscription_details",
        subscription_details: { subscription: "sub_slow", metadata: {} },
      },
    });
    expect((await deliver(paid)).status).toBe(200);
    expect((await slow.billing.plans()).current).toEqual({ plan: "pro", subscriptionStatus: "active" });

    const updated = (status: string) =>
      webhookEvent("customer.subscription.updated", {
        id: "sub_slow",
        object: "subscription",
        customer: "cus_slow",
        status,
      });
    expect((await deliver(updated("past_due"))).status).toBe(200);
    expect((await slow.billing.plans()).current).toEqual({ plan: "pro", subscriptionStatus: "past_due" });
    expect((await deliver(updated("unpaid"))).status).toBe(200);
    expect((await slow.billing.plans()).current).toEqual({ plan: "free", subscriptionStatus: "unpaid" });
    expect((await deliver(updated("active"))).status).toBe(200);
    expect((await slow.billing.plans()).current).toEqual({ plan: "pro", subscriptionStatus: "active" });
  });

  test("a forged, stale, missing or foreign signature is 400 and changes nothing", async () => {
    await Paddock.signup("forger@example.com", "correct horse battery", { baseUrl: t.url });
    const forger = (await Paddock.login("forger@example.com", "correct horse battery", { baseUrl: t.url }))
      .client;
    const forgerId = (await forger.me()).id;
    const payload = webhookEvent("checkout.session.completed", {
      id: "cs_test_forged",
      object: "checkout.session",
      mode: "subscription",
      payment_status: "paid",
      client_reference_id: forgerId,
      customer: "cus_forged",
      subscription: "sub_forged",
      metadata: {},
    });
    const attempts: Record<string, string>[] = [
      {},
      { "stripe-signature": webhookSignature(payload, "whsec_not_the_secret") },
      { "stripe-signature": webhookSignature(payload, webhookSecret, Math.floor(Date.now() / 1000) - 3600) },
      { "stripe-signature": webhookSignature(payload.replace("paid", "paid "), webhookSecret) },
      { "stripe-signature": "t=abc,v1=def" },
    ];
    for (const headers of attempts) {
      const response = await post(payload, headers);
      expect(response.status, JSON.stringify(headers)).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe("webhook_signature_invalid");
    }
    // Whatever the content type, the body is taken as bytes and the signature decides.
    for (const type of ["text/plain", "application/octet-stream"]) {
      const response = await fetch(`${t.url}/billing/webhook`, {
        method: "POST",
        headers: {
          "content-type": type,
          "stripe-signature": webhookSignature(payload, "whsec_not_the_secret"),
        },
        body: payload,
      });
      expect(response.status, type).toBe(400);
    }
    const bare = await fetch(`${t.url}/billing/webhook`, { method: "POST" });
    expect([bare.status, ((await bare.json()) as { code: string }).code]).toEqual([
      400,
      "webhook_signature_invalid",
    ]);
    // A body altered after signing does not verify either.
    const tampered = await post(payload.replace(forgerId, accountId), {
      "stripe-signature": webhookSignature(payload, webhookSecret),
    });
    expect(tampered.status).toBe(400);

    expect(await planOf(forgerId)).toBe("free");
    const db = t.server.stack.database.db;
    expect(
      await db.selectFrom("billing_events").selectAll().where("account_id", "=", forgerId).execute(),
    ).toEqual([]);
    expect(
      await db.selectFrom("account_billing").selectAll().where("account_id", "=", forgerId).execute(),
    ).toEqual([]);

    // The same event, properly signed, is accepted (so the refusals above were the signature's).
    expect((await deliver(payload)).status).toBe(200);
    expect(await planOf(forgerId)).toBe("pro");
  });

  test("events about unknown accounts or of other kinds are acknowledged and change nothing", async () => {
    const unknown = webhookEvent("checkout.session.completed", {
      id: "cs_test_x",
      object: "checkout.session",
      mode: "subscription",
      payment_status: "paid",
      client_reference_id: "acct-does-not-exist",
      customer: "cus_nobody",
      subscription: "sub_nobody",
      metadata: {},
    });
    expect(await deliver(unknown)).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(
      (await deliver(webhookEvent("customer.created", { id: "cus_x", object: "customer" }))).status,
    ).toBe(200);
    const db = t.server.stack.database.db;
    expect(
      await db
        .selectFrom("account_billing")
        .selectAll()
        .where("stripe_customer_id", "=", "cus_nobody")
        .execute(),
    ).toEqual([]);
    // Not JSON at all, even signed: refused.
    const response = await post("not json", {
      "stripe-signature": webhookSignature("not json", webhookSecret),
    });
    expect(response.status).toBe(400);
  });

  test("checkout input: the Free plan and unknown plans are refused; scoped keys and strangers too", async () => {
    const free = await caught(client.billing.checkout("free"));
    expect([free.status, free.code]).toEqual([400, "plan_not_purchasable"]);
    const unknown = await caught(client.billing.checkout("enterprise" as "free"));
    expect([unknown.status, unknown.code]).toEqual([400, "invalid_request"]);
    const extra = await fetch(`${t.url}/billing/checkout`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ plan: "pro", price: "price_cheap" }),
    });
    expect(extra.status).toBe(400);

    const scoped = new Paddock({
      baseUrl: t.url,
      apiKey: (await client.keys.create({ scope: "sandboxes" })).secret,
    });
    const refused = await caught(scoped.billing.plans());
    expect([refused.status, refused.code]).toEqual([403, "scope_forbidden"]);
    const anonymous = await caught(new Paddock({ baseUrl: t.url, apiKey: "" }).billing.checkout("pro"));
    expect(anonymous.status).toBe(401);
  });
});

describe("billing without configuration", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ engine: "sqlite" });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("checkout and the webhook answer 503 billing_not_configured; plans and the rest still work", async () => {
    await Paddock.signup("self@example.com", "correct horse battery", { baseUrl: t.url });
    const client = (await Paddock.login("self@example.com", "correct horse battery", { baseUrl: t.url }))
      .client;
    const plans = await client.billing.plans();
    expect(plans.checkoutAvailable).toBe(false);
    expect(plans.current.plan).toBe("free");
    const checkout = await caught(client.billing.checkout("pro"));
    expect([checkout.status, checkout.code]).toEqual([503, "billing_not_configured"]);
    const payload = webhookEvent("invoice.paid", { id: "in_1", object: "invoice" });
    const webhook = await fetch(`${t.url}/billing/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "stripe-signature": webhookSignature(payload, webhookSecret),
      },
      body: payload,
    });
    expect(webhook.status).toBe(503);
    expect(((await webhook.json()) as { code: string }).code).toBe("billing_not_configured");
    expect((await client.usage.get()).plan.id).toBe("free");
    expect(await client.secrets.list()).toEqual([]);
  });
});
