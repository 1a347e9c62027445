import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { ErrorBody, errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import type { Billing } from "./billing.js";
import type { BillingWebhook } from "./billing-webhook.js";
import { CheckoutRequest, CheckoutSession, PlanList, WebhookReceipt } from "./schemas.js";

/** Plans and checkout: account routes (sessions and unscoped keys only). */
export const billingRoutes: FastifyPluginAsyncTypebox<{ identity: Identity; billing: Billing }> = async (
  app,
  { identity, billing },
) => {
  app.addHook("onRequest", authenticate(identity, null));

  app.get(
    "/billing/plans",
    {
      schema: {
        tags: ["billing"],
        description: "The plans on offer, the account's plan and its subscription status.",
        response: { 200: PlanList, ...errorResponses },
      },
    },
    async (request) => {
      const overview = await billing.overview(principalOf(request).accountId);
      return {
        items: overview.plans,
        current: overview.current,
        checkoutAvailable: overview.checkoutAvailable,
      };
    },
  );

  app.post(
    "/billing/checkout",
    {
      schema: {
        tags: ["billing"],
        description:
          "Starts a Stripe Checkout Session for a subscription to the plan; send the buyer to `url`. The plan changes when Stripe reports the payment to /billing/webhook.",
        body: CheckoutRequest,
        response: { 201: CheckoutSession, ...errorResponses, 502: ErrorBody, 503: ErrorBody },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await billing.checkout(principalOf(request).accountId, request.body.plan)),
  );
};

/** Stripe's event notifications: no bearer token, the signature over the raw body instead. */
export const billingWebhookRoutes: FastifyPluginAsyncTypebox<{ webhook: BillingWebhook }> = async (
  app,
  { webhook },
) => {
  // Stripe signs the exact bytes it sent: the body reaches the handler unparsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  app.post(
    "/billing/webhook",
    {
      schema: {
        tags: ["billing"],
        description:
          "Stripe's event notifications, authenticated by the `Stripe-Signature` header (no bearer token). Each event id is handled once; a replay answers 200 and changes nothing. checkout.session.completed and invoice.paid move the account to Pro, invoice.payment_failed marks it past_due (plan kept while Stripe retries), customer.subscription.deleted moves it to Free.",
        security: [],
        response: { 200: WebhookReceipt, 400: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => {
      const signature = request.headers["stripe-signature"];
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const { duplicate } = await webhook.receive(
        body,
        typeof signature === "string" ? signature : undefined,
      );
      return { received: true, duplicate };
    },
  );
};
