import { PaddockError } from "@paddock/common";
import { appendAuditEvent, type Database, type Db } from "@paddock/db";
import type { Transaction } from "kysely";
import Stripe from "stripe";
import { ControlPlaneErrors } from "../http/errors.js";
import { type BillingSettings, liveSubscriptionStatuses, requireBilling } from "./billing.js";

type Trx = Transaction<Database>;

/** Statuses after which a subscription no longer pays for its plan. */
const endedStatuses = ["canceled", "unpaid", "incomplete_expired", "paused"];

/** The subscription id an invoice belongs to, if any (field moved under `parent` in 2025 API versions). */
function subscriptionOfInvoice(invoice: Stripe.Invoice): { id: string | null; accountId: string | null } {
  const details = invoice.parent?.subscription_details;
  const subscription = details?.subscription;
  return {
    id: typeof subscription === "string" ? subscription : (subscription?.id ?? null),
    accountId: details?.metadata?.account_id ?? null,
  };
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  return typeof value === "string" ? value : (value?.id ?? null);
}

/**
 * Stripe's notifications to POST /billing/webhook: the signature is checked over the raw body,
 * each event is applied once (its id is stored in the same transaction as its effect), and the
 * account moves between plans:
 *
 * - checkout.session.completed (paid), invoice.paid → pro, subscription active
 * - invoice.payment_failed → subscription past_due, plan kept while Stripe retries
 * - customer.subscription.updated → status followed; an ended status drops to free
 * - customer.subscription.deleted → free
 *
 * Events about a subscription other than the account's current one change nothing.
 */
export class BillingWebhook {
  constructor(
    private readonly db: Db,
    private readonly settings: BillingSettings | undefined,
  ) {}

  async receive(body: Buffer, signature: string | undefined): Promise<{ duplicate: boolean }> {
    const settings = requireBilling(this.settings);
    let event: Stripe.Event;
    try {
      event = Stripe.webhooks.constructEvent(
        body,
        signature ?? "",
        settings.webhookSecret,
        settings.webhookToleranceSeconds,
      );
    } catch (error) {
      const reason = error instanceof Stripe.errors.StripeSignatureVerificationError ? error.message : "";
      throw new PaddockError(
        ControlPlaneErrors.webhookSignatureInvalid,
        `the Stripe-Signature header does not verify this body${reason ? `: ${reason}` : ""}`,
      );
    }
    if (typeof event?.id !== "string" || typeof event.type !== "string" || !event.data?.object) {
      throw new PaddockError(ControlPlaneErrors.webhookSignatureInvalid, "the body is not a Stripe event");
    }
    return this.db.transaction().execute(async (trx) => {
      const first = await trx
        .insertInto("billing_events")
        .values({ event_id: event.id, type: event.type, account_id: null, received_at: now() })
        .onConflict((conflict) => conflict.column("event_id").doNothing())
        .returning("event_id")
        .executeTakeFirst();
      if (!first) return { duplicate: true };
      const accountId = await this.apply(trx, event);
      if (accountId) {
        await trx
          .updateTable("billing_events")
          .set({ account_id: accountId })
          .where("event_id", "=", event.id)
          .execute();
      }
      return { duplicate: false };
    });
  }

  /** Applies one event; answers the account it moved, or null when it concerned none of ours. */
  private async apply(trx: Trx, event: Stripe.Event): Promise<string | null> {
    switch (event.type) {
      case "checkout.session.completed": {
        const session = event.data.object;
        if (session.mode !== "subscription") return null;
        const accountId = session.client_reference_id ?? session.metadata?.account_id ?? null;
        if (!accountId || !(await accountExists(trx, accountId))) return null;
        // An asynchronous payment method has not paid yet: invoice.paid will move the plan.
        const paid = session.payment_status !== "unpaid";
        await saveBilling(trx, accountId, {
          stripe_customer_id: idOf(session.customer),
          stripe_subscription_id: idOf(session.subscription),
          subscription_status: paid ? "active" : "incomplete",
        });
        if (paid) await setPlan(trx, accountId, "pro");
        return accountId;
      }
      case "invoice.paid":
      case "invoice.payment_failed": {
        const invoice = event.data.object;
        const subscription = subscriptionOfInvoice(invoice);
        if (!subscription.id) return null; // a one-off invoice, not a plan
        const customerId = idOf(invoice.customer);
        const accountId = (await accountOfCustomer(trx, customerId)) ?? subscription.accountId;
        if (!accountId || !(await accountExists(trx, accountId))) return null;
        const current = await billingOf(trx, accountId);
        // A late event about a subscription that ended or was replaced changes nothing.
        if (current?.stripe_subscription_id && current.stripe_subscription_id !== subscription.id)
          return null;
        if (current?.stripe_subscription_id === subscription.id && current.subscription_status === "canceled")
          return null;
        if (event.type === "invoice.paid") {
          await saveBilling(trx, accountId, {
            stripe_customer_id: customerId,
            stripe_subscription_id: subscription.id,
            subscription_status: "active",
          });
          await setPlan(trx, accountId, "pro");
        } else {
          // Stripe retries the payment; when it gives up it deletes the subscription (→ free).
          await saveBilling(trx, accountId, {
            stripe_customer_id: customerId,
            stripe_subscription_id: subscription.id,
            subscription_status: "past_due",
          });
        }
        return accountId;
      }
      case "customer.subscription.updated":
      case "customer.subscription.deleted": {
        const subscription = event.data.object;
        const customerId = idOf(subscription.customer);
        const accountId =
          (await accountOfCustomer(trx, customerId)) ?? subscription.metadata?.account_id ?? null;
        if (!accountId || !(await accountExists(trx, accountId))) return null;
        const current = await billingOf(trx, accountId);
        if (current?.stripe_subscription_id && current.stripe_subscription_id !== subscription.id)
          return null;
        const status = event.type === "customer.subscription.deleted" ? "canceled" : subscription.status;
        await saveBilling(trx, accountId, {
          stripe_customer_id: customerId,
          stripe_subscription_id: subscription.id,
          subscription_status: status,
        });
        if (endedStatuses.includes(status)) await setPlan(trx, accountId, "free");
        else if (liveSubscriptionStatuses.includes(status) && status !== "past_due")
          await setPlan(trx, accountId, "pro");
        return accountId;
      }
      default:
        return null;
    }
  }
}

function now(): string {
  return new Date().toISOString();
}

async function accountExists(trx: Trx, accountId: string): Promise<boolean> {
  return Boolean(
    await trx.selectFrom("accounts").select("id").where("id", "=", accountId).executeTakeFirst(),
  );
}

async function accountOfCustomer(trx: Trx, customerId: string | null): Promise<string | null> {
  if (!customerId) return null;
  const row = await trx
    .selectFrom("account_billing")
    .select("account_id")
    .where("stripe_customer_id", "=", customerId)
    .executeTakeFirst();
  return row?.account_id ?? null;
}

async function billingOf(trx: Trx, accountId: string) {
  return trx.selectFrom("account_billing").selectAll().where("account_id", "=", accountId).executeTakeFirst();
}

async function saveBilling(
  trx: Trx,
  accountId: string,
  values: {
    stripe_customer_id: string | null;
    stripe_subscription_id: string | null;
    subscription_status: string;
  },
): Promise<void> {
  const row = { account_id: accountId, ...values, updated_at: now() };
  await trx
    .insertInto("account_billing")
    .values(row)
    .onConflict((conflict) =>
      conflict.column("account_id").doUpdateSet({
        // A known customer id is kept when an event does not carry one.
        ...(values.stripe_customer_id ? { stripe_customer_id: values.stripe_customer_id } : {}),
        stripe_subscription_id: values.stripe_subscription_id,
        subscription_status: values.subscription_status,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

async function setPlan(trx: Trx, accountId: string, plan: "free" | "pro"): Promise<void> {
  const current = await trx
    .selectFrom("accounts")
    .select("plan")
    .where("id", "=", accountId)
    .executeTakeFirst();
  if (current?.plan === plan) return;
  await trx.updateTable("accounts").set({ plan }).where("id", "=", accountId).execute();
  // Recorded with the change, in its transaction: a replayed event changes nothing and records nothing.
  await appendAuditEvent(trx, {
    accountId,
    type: "plan.changed",
    actor: { kind: "billing" },
    target: { type: "account", id: accountId },
    details: { from: current?.plan ?? null, to: plan },
  });
}
