import { Errors, PaddockError } from "@paddock/common";
import type { Db } from "@paddock/db";
import type { FastifyBaseLogger } from "fastify";
import { ControlPlaneErrors } from "../http/errors.js";
import { type Plan, type PlanId, planOf, plans } from "../plans/plans.js";
import { stripeClient } from "./stripe-client.js";

/** The platform's Stripe account, from `[billing]` in the config. */
export interface BillingSettings {
  stripeSecretKey: string;
  webhookSecret: string;
  /** https://api.stripe.com, or a local stand-in. */
  apiBase: string;
  /** The Stripe Price a Pro subscription is sold at. */
  proPriceId: string;
  /** Where Checkout sends the buyer back to; empty = the server's public URL. */
  successUrl: string;
  cancelUrl: string;
  webhookToleranceSeconds: number;
}

/** Subscription statuses in which the account still holds the plan it paid for. */
export const liveSubscriptionStatuses = ["active", "trialing", "past_due"];

export interface BillingOverview {
  plans: Plan[];
  current: { plan: PlanId; subscriptionStatus: string | null };
  checkoutAvailable: boolean;
}

/** Billing is usable once the secret key, the webhook secret and the Pro price are all set. */
export function billingConfigured(settings: BillingSettings | undefined): settings is BillingSettings {
  return Boolean(settings?.stripeSecretKey && settings.webhookSecret && settings.proPriceId);
}

export function requireBilling(settings: BillingSettings | undefined): BillingSettings {
  if (!billingConfigured(settings)) {
    throw new PaddockError(
      ControlPlaneErrors.billingNotConfigured,
      "billing is not configured on this server: the operator sets [billing] stripe_secret_key, stripe_webhook_secret and pro_price_id",
    );
  }
  return settings;
}

/** Plans and checkout: what the account is on, and a Stripe Checkout Session to move up. */
export interface BillingDependencies {
  db: Db;
  /** Absent when `[billing]` is not configured. */
  settings: BillingSettings | undefined;
  publicUrl: () => string;
  log: Pick<FastifyBaseLogger, "warn">;
  /** Minutes a plan includes as this server enforces them (the Free plan's are configurable). */
  includedMinutes: (plan: Plan) => number | null;
}

export class Billing {
  private readonly db: Db;
  private readonly settings: BillingSettings | undefined;

  constructor(private readonly deps: BillingDependencies) {
    this.db = deps.db;
    this.settings = deps.settings;
  }

  async overview(accountId: string): Promise<BillingOverview> {
    const account = await this.db
      .selectFrom("accounts")
      .leftJoin("account_billing", "account_billing.account_id", "accounts.id")
      .select(["accounts.plan", "account_billing.subscription_status"])
      .where("accounts.id", "=", accountId)
      .executeTakeFirst();
    if (!account) throw new PaddockError(Errors.unauthorized, "the account no longer exists");
    return {
      plans: Object.values(plans).map((plan) => ({
        ...plan,
        includedMinutes: this.deps.includedMinutes(plan),
      })),
      current: { plan: planOf(account.plan).id, subscriptionStatus: account.subscription_status ?? null },
      checkoutAvailable: billingConfigured(this.settings),
    };
  }

  /**
   * A subscription-mode Checkout Session for the plan's price, tied to the account by
   * client_reference_id and metadata; the account's Stripe customer is reused once it has one.
   */
  async checkout(accountId: string, planId: PlanId): Promise<{ id: string; url: string }> {
    const settings = requireBilling(this.settings);
    const price = planId === "pro" ? settings.proPriceId : undefined;
    if (!price) {
      throw new PaddockError(
        ControlPlaneErrors.planNotPurchasable,
        `the ${plans[planId].name} plan is not sold through checkout; choose "pro"`,
      );
    }
    const account = await this.db
      .selectFrom("accounts")
      .leftJoin("account_billing", "account_billing.account_id", "accounts.id")
      .select([
        "accounts.email",
        "accounts.plan",
        "account_billing.stripe_customer_id",
        "account_billing.subscription_status",
      ])
      .where("accounts.id", "=", accountId)
      .executeTakeFirstOrThrow();
    if (account.plan === planId && liveSubscriptionStatuses.includes(account.subscription_status ?? "")) {
      throw new PaddockError(
        ControlPlaneErrors.alreadySubscribed,
        `the account already has a ${account.subscription_status} subscription to ${plans[planId].name}`,
      );
    }
    const back = this.deps.publicUrl().replace(/\/$/, "");
    const metadata = { account_id: accountId, plan: planId };
    let session: { id: string; url: string | null };
    try {
      session = await stripeClient(settings.stripeSecretKey, settings.apiBase).checkout.sessions.create({
        mode: "subscription",
        line_items: [{ price, quantity: 1 }],
        client_reference_id: accountId,
        metadata,
        subscription_data: { metadata },
        ...(account.stripe_customer_id
          ? { customer: account.stripe_customer_id }
          : { customer_email: account.email }),
        success_url: settings.successUrl || `${back}/?checkout=success`,
        cancel_url: settings.cancelUrl || `${back}/?checkout=cancel`,
      });
    } catch (error) {
      // The operator's side (a wrong price or key) or Stripe's: the log says which.
      this.deps.log.warn({ err: error, accountId }, "Stripe did not create a checkout session");
      throw new PaddockError(
        ControlPlaneErrors.billingProviderUnavailable,
        "Stripe did not create the checkout session; try again later",
        { cause: error },
      );
    }
    if (!session.url) {
      throw new PaddockError(
        ControlPlaneErrors.billingProviderUnavailable,
        "Stripe returned no checkout URL",
      );
    }
    return { id: session.id, url: session.url };
  }
}
