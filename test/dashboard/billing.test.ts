import { randomBytes } from "node:crypto";
import type { TestServer } from "@paddock/server/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  launchChromium,
  openPage,
  screenshotOnFailure,
  signUp,
  startDashboardServer,
  textOf,
} from "../support/dashboard.js";
import { FakeStripe, webhookEvent, webhookSignature } from "../support/fake-stripe.js";

/** How long what the page shows may take to change, on two busy cores. */
const settle = { timeout: 15_000, interval: 100 };
const webhookSecret = `whsec_${randomBytes(24).toString("base64url")}`;
const proPrice = "price_pro_monthly";

/**
 * The upgrade from the Billing page: the server is configured with Stripe (its API is the local
 * stand-in), the browser's visit to Stripe's hosted checkout is answered here (nothing leaves
 * the machine), and the payment arrives as Stripe's signed webhook.
 */
describe("the dashboard's Billing page", () => {
  let stripe: FakeStripe;
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const checkoutPages: string[] = [];

  const heading = (name: string) => page.getByRole("heading", { name, level: 1 });
  const planCard = (name: string) => page.locator(".mantine-Card-root").filter({ hasText: name });
  const upgrade = async () => {
    await page.getByRole("button", { name: "Upgrade to Pro" }).click();
    await page.waitForURL(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const sessions = stripe.account("platform").checkoutSessions;
    const session = sessions.find((candidate) => page.url().endsWith(candidate.id));
    if (!session) throw new Error(`the browser went to ${page.url()}, not to a session the server created`);
    return session;
  };

  beforeAll(async () => {
    stripe = await FakeStripe.start();
    const platformKey = stripe.addAccount("platform", { prices: [proPrice] });
    [t, browser] = await Promise.all([
      startDashboardServer({
        billing: {
          stripe_secret_key: platformKey,
          stripe_webhook_secret: webhookSecret,
          stripe_api_base: stripe.url,
          pro_price_id: proPrice,
        },
      }),
      launchChromium(),
    ]);
    const opened = await openPage(browser);
    ({ page, problems } = opened);
    // Stripe's hosted checkout page, answered in the browser itself.
    await opened.context.route("https://checkout.stripe.com/**", (route) => {
      checkoutPages.push(route.request().url());
      return route.fulfill({ contentType: "text/html", body: "<title>Checkout</title><h1>Pay Paddock</h1>" });
    });
    await signUp(page, "buyer-dashboard@example.com", t.url);
  });
  afterEach(async ({ task }) => {
    await screenshotOnFailure(page, task);
    expect(problems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.dispose();
    await stripe?.stop();
  });

  test("the Free plan is current; a checkout cancelled at Stripe comes back to say nothing was charged", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Billing" }).click();
    await heading("Billing").waitFor();
    await expect.poll(() => textOf(planCard("Free")), settle).toContain("Current plan");
    expect(await page.getByText("Billing is not configured").count()).toBe(0);

    const session = await upgrade();
    expect(session).toMatchObject({
      mode: "subscription",
      customer_email: "buyer-dashboard@example.com",
      success_url: `${t.url}/?checkout=success`,
      cancel_url: `${t.url}/?checkout=cancel`,
    });
    // Stripe sends the buyer who gives up to the cancel address.
    await page.goto(session.cancel_url as string);
    await heading("Billing").waitFor();
    expect(new URL(page.url()).hash).toBe("#/billing?checkout=cancel");
    const notice = page.getByRole("status").filter({ hasText: "Checkout cancelled" });
    await expect.poll(() => textOf(notice), settle).toContain("Nothing was charged");
    expect(await textOf(planCard("Free"))).toContain("Current plan");
    await notice.getByRole("button", { name: "Dismiss" }).click();
    await notice.waitFor({ state: "detached" });
    expect(new URL(page.url()).hash).toBe("#/billing");
  });

  test("after paying, the page waits for Stripe's confirmation and shows the Pro plan without a reload", async () => {
    const session = await upgrade();
    // Stripe sends the buyer back before its webhook may have arrived.
    await page.goto(session.success_url as string);
    await heading("Billing").waitFor();
    const notice = page.getByRole("status").filter({ hasText: /Payment received|Your plan is upgraded/ });
    await expect.poll(() => textOf(notice), settle).toContain("Payment received");
    expect(await textOf(planCard("Free"))).toContain("Current plan");

    const completed = webhookEvent("checkout.session.completed", {
      ...session,
      status: "complete",
      payment_status: "paid",
      customer: stripe.addCustomer("platform", "buyer-dashboard@example.com"),
      subscription: "sub_dashboard",
    });
    const delivered = await fetch(`${t.url}/billing/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "stripe-signature": webhookSignature(completed, webhookSecret),
      },
      body: completed,
    });
    expect(delivered.status).toBe(200);

    await expect.poll(() => textOf(notice), settle).toContain("you are on the Pro plan");
    expect(await textOf(planCard("Pro"))).toContain("Current plan");
    expect(await page.getByRole("button", { name: "Upgrade to Pro" }).count()).toBe(0);
    expect(await page.getByText("Subscription: active").count()).toBe(1);
    // Only Stripe's checkout address was visited, once per upgrade.
    expect(checkoutPages).toHaveLength(2);
  });
});
