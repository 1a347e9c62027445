import { type ConnectionOptions, type RequestOptions, Transport } from "./transport.js";
import type {
  AgentKey,
  AgentKeyLimits,
  AgentKeyWithSecret,
  CreateCustomerOptions,
  CreateInvoiceOptions,
  CreatePaymentLinkOptions,
  Customer,
  CustomerList,
  Invoice,
  InvoiceList,
  PaymentCredentials,
  PaymentLink,
  PaymentLinkList,
} from "./types.js";
import { encodePart, queryOf } from "./url.js";

/** Environment variable an agent's payments client reads its key from. */
export const agentKeyVariable = "PADDOCK_PAYMENTS_AGENT_KEY";

interface PageOptions extends RequestOptions {
  limit?: number;
  startingAfter?: string;
}

/**
 * Customers, invoices and payment links on the account's own Stripe account. Works with the
 * owner's credentials or with the payments agent key (then within the limits its owner set:
 * anything else is refused with a `PermissionError` whose code starts with `agent_`).
 */
export class PaymentOperations {
  constructor(protected readonly transport: Transport) {}

  readonly customers = {
    create: (customer: CreateCustomerOptions = {}, options: RequestOptions = {}): Promise<Customer> =>
      this.transport.json("POST", "/payments/customers", customer, options),
    list: (options: PageOptions & { email?: string } = {}): Promise<CustomerList> => {
      const { limit, startingAfter, email, ...request } = options;
      const query = queryOf({ limit, startingAfter, email });
      return this.transport.json("GET", `/payments/customers${query}`, undefined, request);
    },
  };

  readonly invoices = {
    /** A draft invoice, one item per line (amounts in the currency's smallest unit); `finalize: true` makes it payable at once. */
    create: (invoice: CreateInvoiceOptions, options: RequestOptions = {}): Promise<Invoice> =>
      this.transport.json("POST", "/payments/invoices", invoice, options),
    list: (
      options: PageOptions & {
        customer?: string;
        status?: "draft" | "open" | "paid" | "uncollectible" | "void";
      } = {},
    ): Promise<InvoiceList> => {
      const { limit, startingAfter, customer, status, ...request } = options;
      const query = queryOf({ limit, startingAfter, customer, status });
      return this.transport.json("GET", `/payments/invoices${query}`, undefined, request);
    },
    finalize: (id: string, options: RequestOptions = {}): Promise<Invoice> =>
      this.transport.json("POST", `/payments/invoices/${encodePart(id)}/finalize`, undefined, options),
  };

  readonly paymentLinks = {
    create: (link: CreatePaymentLinkOptions, options: RequestOptions = {}): Promise<PaymentLink> =>
      this.transport.json("POST", "/payments/payment-links", link, options),
    list: (options: PageOptions & { active?: boolean } = {}): Promise<PaymentLinkList> => {
      const { limit, startingAfter, active, ...request } = options;
      const query = queryOf({ limit, startingAfter, active });
      return this.transport.json("GET", `/payments/payment-links${query}`, undefined, request);
    },
  };

  /**
   * A payments client for an agent that holds only the agent key (e.g. inside a sandbox):
   * `apiKey` defaults to PADDOCK_PAYMENTS_AGENT_KEY, `baseUrl` to PADDOCK_BASE_URL.
   */
  static forAgent(options: ConnectionOptions = {}): PaymentOperations {
    const apiKey = options.apiKey ?? process.env[agentKeyVariable];
    if (!apiKey) throw new Error(`no agent key: pass apiKey or set ${agentKeyVariable}`);
    return new PaymentOperations(new Transport({ ...options, apiKey }));
  }
}

/**
 * `client.payments`: bring your own Stripe key. The owner stores the key (`credentials`), issues
 * an agent key with limits (`agentKey`), and calls the operations itself or hands the agent key
 * to an agent (`PaymentOperations.forAgent`).
 */
export class Payments extends PaymentOperations {
  readonly credentials = {
    /** Verifies the key with Stripe and stores it encrypted; only the masked form comes back. */
    set: (secretKey: string, options: RequestOptions = {}): Promise<PaymentCredentials> =>
      this.transport.json("PUT", "/payments/credentials", { secretKey }, options),
    get: (options: RequestOptions = {}): Promise<PaymentCredentials> =>
      this.transport.json("GET", "/payments/credentials", undefined, options),
    delete: async (options: RequestOptions = {}): Promise<void> => {
      await this.transport.fetch("DELETE", "/payments/credentials", undefined, options);
    },
  };

  readonly agentKey = {
    /** Issues the agent key (shown once in `key`), replacing any earlier one. */
    create: (limits: AgentKeyLimits, options: RequestOptions = {}): Promise<AgentKeyWithSecret> =>
      this.transport.json("POST", "/payments/agent-key", limits, options),
    get: (options: RequestOptions = {}): Promise<AgentKey> =>
      this.transport.json("GET", "/payments/agent-key", undefined, options),
    revoke: async (options: RequestOptions = {}): Promise<void> => {
      await this.transport.fetch("DELETE", "/payments/agent-key", undefined, options);
    },
  };
}
