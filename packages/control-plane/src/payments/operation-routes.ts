import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ErrorBody, errorResponses } from "../http/error-schemas.js";
import type { AgentKeys } from "../identity/agent-keys.js";
import type { Identity } from "../identity/identity.js";
import type { PaymentOperations } from "./payment-operations.js";
import { authenticatePaymentActor, paymentActorOf } from "./payments-auth.js";
import {
  CreateCustomerRequest,
  CreateInvoiceRequest,
  CreatePaymentLinkRequest,
  Customer,
  CustomerList,
  CustomerListQuery,
  Invoice,
  InvoiceList,
  InvoiceListQuery,
  InvoiceParams,
  PaymentLink,
  PaymentLinkList,
  PaymentLinkListQuery,
} from "./schemas.js";

const operationErrors = { ...errorResponses, 502: ErrorBody };
const agentNote =
  " Takes the account's session, an unscoped key, or the payments agent key (`Bearer pak_…`), whose limits are checked before anything reaches Stripe (403 agent_*).";

/** Customers, invoices and payment links on the account's own Stripe account. */
export const paymentOperationRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  agentKeys: AgentKeys;
  operations: PaymentOperations;
}> = async (app, { identity, agentKeys, operations }) => {
  app.addHook("onRequest", authenticatePaymentActor(identity, agentKeys));

  app.post(
    "/payments/customers",
    {
      schema: {
        tags: ["payments"],
        description: `Creates a customer (operation create_customer).${agentNote}`,
        body: CreateCustomerRequest,
        response: { 201: Customer, ...operationErrors },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await operations.createCustomer(paymentActorOf(request), request.body)),
  );

  app.get(
    "/payments/customers",
    {
      schema: {
        tags: ["payments"],
        description: `Lists customers, newest first (operation list_customers).${agentNote}`,
        querystring: CustomerListQuery,
        response: { 200: CustomerList, ...operationErrors },
      },
    },
    async (request) => operations.listCustomers(paymentActorOf(request), request.query),
  );

  app.post(
    "/payments/invoices",
    {
      schema: {
        tags: ["payments"],
        description: `Creates an invoice for a customer, one item per line, sent for payment within daysUntilDue; a draft unless finalize is true (operation create_invoice; its total counts against the agent's caps).${agentNote}`,
        body: CreateInvoiceRequest,
        response: { 201: Invoice, ...operationErrors },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await operations.createInvoice(paymentActorOf(request), request.body)),
  );

  app.get(
    "/payments/invoices",
    {
      schema: {
        tags: ["payments"],
        description: `Lists invoices, newest first (operation list_invoices).${agentNote}`,
        querystring: InvoiceListQuery,
        response: { 200: InvoiceList, ...operationErrors },
      },
    },
    async (request) => operations.listInvoices(paymentActorOf(request), request.query),
  );

  app.post(
    "/payments/invoices/:id/finalize",
    {
      schema: {
        tags: ["payments"],
        description: `Finalizes a draft invoice: it becomes open and payable at hostedInvoiceUrl (operation finalize_invoice; for an agent, the invoice's total must be within its per-operation cap).${agentNote}`,
        params: InvoiceParams,
        response: { 200: Invoice, ...operationErrors },
      },
    },
    async (request) => operations.finalizeInvoice(paymentActorOf(request), request.params.id),
  );

  app.post(
    "/payments/payment-links",
    {
      schema: {
        tags: ["payments"],
        description: `Creates a payment link selling these lines (operation create_payment_link; the total of one purchase counts against the agent's caps).${agentNote}`,
        body: CreatePaymentLinkRequest,
        response: { 201: PaymentLink, ...operationErrors },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await operations.createPaymentLink(paymentActorOf(request), request.body)),
  );

  app.get(
    "/payments/payment-links",
    {
      schema: {
        tags: ["payments"],
        description: `Lists payment links (operation list_payment_links).${agentNote}`,
        querystring: PaymentLinkListQuery,
        response: { 200: PaymentLinkList, ...operationErrors },
      },
    },
    async (request) => operations.listPaymentLinks(paymentActorOf(request), request.query),
  );
};
