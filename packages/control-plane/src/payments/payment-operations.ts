import { PaddockError } from "@paddock/common";
import Stripe from "stripe";
import { paymentProviderFailure } from "../billing/stripe-client.js";
import { ControlPlaneErrors } from "../http/errors.js";
import type { AgentKeys, PaymentAgent, PaymentOperation } from "../identity/agent-keys.js";
import type { PaymentCredentials } from "./payment-credentials.js";
import type {
  CreateCustomerRequest,
  CreateInvoiceRequest,
  CreatePaymentLinkRequest,
  CustomerListQuery,
  InvoiceListQuery,
  PaymentLinkListQuery,
} from "./schemas.js";

/** Who calls a payment operation: the account owner (session or key), or its agent key. */
export interface PaymentActor {
  accountId: string;
  /** Set when the call came with the agent key: its limits apply. */
  agent: PaymentAgent | null;
}

/** What a guarded call costs against the agent's limits. */
interface Charge {
  amount: number;
  currency: string;
  /** Counted against the total cap (creations are; finalizing an existing invoice is not). */
  counted: boolean;
}

const iso = (seconds: number | null | undefined) =>
  seconds === null || seconds === undefined ? null : new Date(seconds * 1000).toISOString();

/**
 * Customers, invoices and payment links on the account's own Stripe account, with its stored key.
 * An agent key's limits (operation, currency, per-call cap, total cap) are checked before
 * anything is sent to Stripe.
 */
export class PaymentOperations {
  constructor(
    private readonly credentials: PaymentCredentials,
    private readonly agentKeys: AgentKeys,
  ) {}

  async createCustomer(actor: PaymentActor, input: CreateCustomerRequest) {
    return this.call(actor, "create_customer", null, async (stripe) =>
      customerOf(await stripe.customers.create(input)),
    );
  }

  async listCustomers(actor: PaymentActor, query: CustomerListQuery) {
    return this.call(actor, "list_customers", null, async (stripe) => {
      const page = await stripe.customers.list({
        ...cursorOf(query),
        ...(query.email ? { email: query.email } : {}),
      });
      return { items: page.data.map(customerOf), hasMore: page.has_more };
    });
  }

  /** A draft invoice with one invoice item per line; finalized at once when asked. */
  async createInvoice(actor: PaymentActor, input: CreateInvoiceRequest) {
    const lines = input.lineItems.map((line) => ({ ...line, quantity: line.quantity ?? 1 }));
    const amount = lines.reduce((sum, line) => sum + line.unitAmount * line.quantity, 0);
    const charge = { amount, currency: input.currency, counted: true };
    return this.call(actor, "create_invoice", charge, async (stripe) => {
      const draft = await stripe.invoices.create({
        customer: input.customer,
        currency: input.currency,
        collection_method: "send_invoice",
        days_until_due: input.daysUntilDue ?? 30,
        auto_advance: false,
        pending_invoice_items_behavior: "exclude",
        ...(input.metadata ? { metadata: input.metadata } : {}),
      });
      try {
        for (const line of lines) {
          await stripe.invoiceItems.create({
            customer: input.customer,
            invoice: draft.id,
            currency: input.currency,
            description: line.description,
            quantity: line.quantity,
            unit_amount_decimal: Stripe.Decimal.from(line.unitAmount),
          });
        }
        const done = input.finalize
          ? await stripe.invoices.finalizeInvoice(draft.id)
          : await stripe.invoices.retrieve(draft.id);
        return invoiceOf(done);
      } catch (error) {
        // No half-built draft is left in the user's account (its amount is no longer counted).
        await stripe.invoices.del(draft.id).catch(() => undefined);
        throw error;
      }
    });
  }

  async listInvoices(actor: PaymentActor, query: InvoiceListQuery) {
    return this.call(actor, "list_invoices", null, async (stripe) => {
      const page = await stripe.invoices.list({
        ...cursorOf(query),
        ...(query.customer ? { customer: query.customer } : {}),
        ...(query.status ? { status: query.status } : {}),
      });
      return { items: page.data.map(invoiceOf), hasMore: page.has_more };
    });
  }

  /** Finalizes a draft; for an agent, the invoice's total and currency must be within its limits. */
  async finalizeInvoice(actor: PaymentActor, invoiceId: string) {
    return this.call(actor, "finalize_invoice", null, async (stripe) => {
      if (actor.agent) {
        const invoice = await stripe.invoices.retrieve(invoiceId);
        checkAmount(actor.agent, { amount: invoice.total, currency: invoice.currency, counted: false });
      }
      return invoiceOf(await stripe.invoices.finalizeInvoice(invoiceId));
    });
  }

  async createPaymentLink(actor: PaymentActor, input: CreatePaymentLinkRequest) {
    const lines = input.lineItems.map((line) => ({ ...line, quantity: line.quantity ?? 1 }));
    const amount = lines.reduce((sum, line) => sum + line.unitAmount * line.quantity, 0);
    return this.call(
      actor,
      "create_payment_link",
      { amount, currency: input.currency, counted: true },
      async (stripe) =>
        paymentLinkOf(
          await stripe.paymentLinks.create({
            line_items: lines.map((line) => ({
              price_data: {
                currency: input.currency,
                unit_amount: line.unitAmount,
                product_data: { name: line.name },
              },
              quantity: line.quantity,
            })),
            ...(input.metadata ? { metadata: input.metadata } : {}),
          }),
        ),
    );
  }

  async listPaymentLinks(actor: PaymentActor, query: PaymentLinkListQuery) {
    return this.call(actor, "list_payment_links", null, async (stripe) => {
      const page = await stripe.paymentLinks.list({
        ...cursorOf(query),
        ...(query.active === undefined ? {} : { active: query.active }),
      });
      return { items: page.data.map(paymentLinkOf), hasMore: page.has_more };
    });
  }

  /**
   * The one path of every operation: the agent's limits first (nothing reaches Stripe when they
   * refuse), then the account's key, then Stripe, whose failures become registry errors.
   */
  private async call<T>(
    actor: PaymentActor,
    operation: PaymentOperation,
    charge: Charge | null,
    run: (stripe: Stripe) => Promise<T>,
  ): Promise<T> {
    let undo: (() => Promise<void>) | undefined;
    if (actor.agent) {
      checkOperation(actor.agent, operation);
      if (charge) {
        checkAmount(actor.agent, charge);
        // Counted even without a total cap, so the owner sees what the agent has billed.
        if (charge.counted) undo = await this.agentKeys.reserve(actor.agent, charge.amount);
      }
    }
    try {
      const stripe = await this.credentials.clientFor(actor.accountId);
      return await run(stripe);
    } catch (error) {
      await undo?.();
      throw paymentProviderFailure(error);
    }
  }
}

/** Stripe's page of a list: its size (10 unless asked) and the item it starts after. */
function cursorOf(query: { limit?: number; startingAfter?: string }) {
  return {
    limit: query.limit ?? 10,
    ...(query.startingAfter ? { starting_after: query.startingAfter } : {}),
  };
}

function checkOperation(agent: PaymentAgent, operation: PaymentOperation): void {
  if (!agent.allowedOperations.includes(operation)) {
    throw new PaddockError(
      ControlPlaneErrors.agentOperationNotAllowed,
      `this agent key may not ${operation.replaceAll("_", " ")}; it allows ${agent.allowedOperations.join(", ")}`,
    );
  }
}

function checkAmount(agent: PaymentAgent, charge: Charge): void {
  if (charge.currency !== agent.currency) {
    throw new PaddockError(
      ControlPlaneErrors.agentCurrencyNotAllowed,
      `this agent key bills in ${agent.currency} only, not ${charge.currency}`,
    );
  }
  if (charge.amount > agent.maxAmount) {
    throw new PaddockError(
      ControlPlaneErrors.agentAmountOverLimit,
      `${charge.amount} ${charge.currency} is above this agent key's cap of ${agent.maxAmount} per operation`,
    );
  }
}

function customerOf(customer: Stripe.Customer) {
  return {
    id: customer.id,
    email: customer.email ?? null,
    name: customer.name ?? null,
    description: customer.description ?? null,
    metadata: customer.metadata ?? {},
    createdAt: iso(customer.created) as string,
  };
}

function invoiceOf(invoice: Stripe.Invoice) {
  const customer = invoice.customer;
  return {
    id: invoice.id as string,
    customer: typeof customer === "string" ? customer : (customer?.id ?? ""),
    status: invoice.status ?? "draft",
    currency: invoice.currency,
    total: invoice.total,
    amountDue: invoice.amount_due,
    hostedInvoiceUrl: invoice.hosted_invoice_url ?? null,
    dueDate: iso(invoice.due_date),
    lineItems: (invoice.lines?.data ?? []).map((line) => ({
      description: line.description ?? null,
      quantity: line.quantity ?? null,
      amount: line.amount,
    })),
    metadata: invoice.metadata ?? {},
    createdAt: iso(invoice.created) as string,
  };
}

function paymentLinkOf(link: Stripe.PaymentLink) {
  return {
    id: link.id,
    url: link.url,
    active: link.active,
    currency: link.currency,
    metadata: link.metadata ?? {},
  };
}
