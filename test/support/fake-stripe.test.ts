import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeForm, FakeStripe } from "./fake-stripe.js";

// The stand-in must speak the wire format the official package speaks: these run the package
// against it, so a drift between the two shows here rather than as a puzzling payments failure.

describe("the fake Stripe API", () => {
  let fake: FakeStripe;
  let stripe: Stripe;
  let key: string;

  beforeAll(async () => {
    fake = await FakeStripe.start();
    key = fake.addAccount("a");
    const url = new URL(fake.url);
    stripe = new Stripe(key, {
      host: url.hostname,
      port: Number(url.port),
      protocol: "http",
      maxNetworkRetries: 0,
    });
  });
  afterAll(async () => {
    await fake?.stop();
  });

  test("bracket notation decodes into nested objects and arrays", () => {
    expect(
      decodeForm(
        "line_items[0][price_data][currency]=usd&line_items[0][quantity]=2&line_items[1][price]=price_1&metadata[a%20b]=c&mode=payment",
      ),
    ).toEqual({
      line_items: [{ price_data: { currency: "usd" }, quantity: "2" }, { price: "price_1" }],
      metadata: { "a b": "c" },
      mode: "payment",
    });
  });

  test("an unknown key is Stripe's 401, which the package reports as an authentication error", async () => {
    const url = new URL(fake.url);
    const stranger = new Stripe("sk_test_unknown00000000", {
      host: url.hostname,
      port: Number(url.port),
      protocol: "http",
    });
    const error = await stranger.balance.retrieve().catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(error).toMatchObject({ statusCode: 401, type: "StripeAuthenticationError" });
    expect((error as Error).message).not.toContain("sk_test_unknown00000000");
  });

  test("missing objects, list envelopes and pagination follow Stripe's shapes", async () => {
    const missing = await stripe.customers.retrieve("cus_nope").catch((reason: unknown) => reason);
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: "resource_missing" });

    const created = [];
    for (const name of ["one", "two", "three"]) created.push(await stripe.customers.create({ name }));
    expect(created.every((customer) => customer.id.startsWith("cus_"))).toBe(true);
    const page = await stripe.customers.list({ limit: 2 });
    expect(page).toMatchObject({ object: "list", has_more: true });
    expect(page.data.map((c) => c.name)).toEqual(["three", "two"]);
    // The package's auto-pagination walks the pages through starting_after.
    const names: (string | null | undefined)[] = [];
    for await (const customer of stripe.customers.list({ limit: 1 })) names.push(customer.name);
    expect(names).toEqual(["three", "two", "one"]);
  });

  test("an idempotency key replays the first answer, and refuses other parameters", async () => {
    const first = await stripe.customers.create({ name: "once" }, { idempotencyKey: "k-1" });
    const again = await stripe.customers.create({ name: "once" }, { idempotencyKey: "k-1" });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(fake.account("a").customers.filter((c) => c.name === "once")).toHaveLength(1);
    const conflict = await stripe.customers
      .create({ name: "twice" }, { idempotencyKey: "k-1" })
      .catch((reason: unknown) => reason);
    expect(conflict).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });

  test("invoices total their items and finalize once", async () => {
    const customer = await stripe.customers.create({ name: "payer" });
    const invoice = await stripe.invoices.create({
      customer: customer.id,
      collection_method: "send_invoice",
      days_until_due: 7,
    });
    await stripe.invoiceItems.create({
      customer: customer.id,
      invoice: invoice.id,
      quantity: 3,
      unit_amount_decimal: Stripe.Decimal.from(250),
    });
    const finalized = await stripe.invoices.finalizeInvoice(invoice.id as string);
    expect(finalized).toMatchObject({ status: "open", total: 750, amount_due: 750 });
    expect(finalized.hosted_invoice_url).toBeTruthy();
    const refused = await stripe.invoices
      .finalizeInvoice(invoice.id as string)
      .catch((reason: unknown) => reason);
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused).toMatchObject({ statusCode: 400 });
  });
});
