import { type Static, Type } from "@sinclair/typebox";
import { planIds } from "../plans/plans.js";

const strict = { additionalProperties: false } as const;

export const PlanInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  priceCents: Type.Integer({ description: "Monthly price in the currency's smallest unit; 0 for Free." }),
  currency: Type.String(),
  includedMinutes: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
    description: "Sandbox minutes included per calendar month (UTC) on this server; null means no limit.",
  }),
});

export const PlanList = Type.Object({
  items: Type.Array(PlanInfo),
  current: Type.Object({
    plan: Type.String({ description: "The account's plan id." }),
    subscriptionStatus: Type.Union([Type.String(), Type.Null()], {
      description:
        "Stripe's status of the account's subscription (active, past_due, canceled…); null before any checkout. past_due keeps the plan while Stripe retries the payment.",
    }),
  }),
  checkoutAvailable: Type.Boolean({
    description: "False when this server has no billing configured (checkout answers 503).",
  }),
});

export const CheckoutRequest = Type.Object(
  {
    plan: Type.Union(
      planIds.map((id) => Type.Literal(id)),
      { description: "The plan to buy." },
    ),
  },
  strict,
);
export type CheckoutRequest = Static<typeof CheckoutRequest>;

export const CheckoutSession = Type.Object({
  id: Type.String({ description: "Stripe's Checkout Session id (`cs_…`)." }),
  url: Type.String({ description: "Send the buyer here; the plan changes when Stripe reports payment." }),
});

export const WebhookReceipt = Type.Object({
  received: Type.Boolean(),
  duplicate: Type.Boolean({ description: "True when this event id was already handled: nothing changed." }),
});
