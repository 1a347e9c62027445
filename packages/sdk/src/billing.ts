import type { RequestOptions, Transport } from "./transport.js";
import type { CheckoutSession, PlanId, PlanList } from "./types.js";

/**
 * `client.billing`: the platform's plans and Stripe Checkout. Needs a session or an unscoped
 * key. The plan changes once Stripe reports the payment to the server, not when checkout starts.
 */
export class Billing {
  constructor(private readonly transport: Transport) {}

  /** The plans on offer, the account's current plan and its subscription status. */
  plans(options: RequestOptions = {}): Promise<PlanList> {
    return this.transport.json("GET", "/billing/plans", undefined, options);
  }

  /** A Checkout Session for the plan; send the buyer to its `url`. */
  checkout(plan: PlanId, options: RequestOptions = {}): Promise<CheckoutSession> {
    return this.transport.json("POST", "/billing/checkout", { plan }, options);
  }
}
