import { type Static, Type } from "@sinclair/typebox";
import { paymentOperations } from "../identity/agent-keys.js";

const strict = { additionalProperties: false } as const;

/** Amounts are integers in the currency's smallest unit (cents), within Stripe's 8-digit limit. */
const Amount = (description: string) => Type.Integer({ minimum: 0, maximum: 99_999_999, description });
const Currency = Type.String({
  pattern: "^[a-z]{3}$",
  description: "Lower-case ISO 4217 code, e.g. `usd`.",
});
const Metadata = Type.Record(
  Type.String({ pattern: "^[A-Za-z0-9_.-]{1,40}$" }),
  Type.String({ maxLength: 500 }),
  {
    maxProperties: 20,
    additionalProperties: false,
    description: "Key-value pairs stored on the provider's object (at most 20; keys up to 40 characters).",
  },
);
const Timestamp = Type.String({ description: "RFC 3339, UTC." });

// Credentials

export const SetCredentialsRequest = Type.Object(
  {
    secretKey: Type.String({
      pattern: "^(sk|rk)_(test|live)_[A-Za-z0-9]{8,247}$",
      description:
        "A Stripe secret or restricted key (`sk_test_…`, `sk_live_…`, `rk_…`). Verified with Stripe, stored encrypted, never returned.",
    }),
  },
  strict,
);
export type SetCredentialsRequest = Static<typeof SetCredentialsRequest>;

export const PaymentCredentials = Type.Object({
  provider: Type.Literal("stripe"),
  maskedKey: Type.String({ description: "The key's kind and last four characters, e.g. `sk_test_…4242`." }),
  livemode: Type.Boolean({ description: "True for a live-mode key (real money)." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

// Agent key

export const PaymentOperation = Type.Union(
  paymentOperations.map((operation) => Type.Literal(operation)),
  { description: "An operation of the /payments proxy." },
);

export const AgentKeyRequest = Type.Object(
  {
    allowedOperations: Type.Array(PaymentOperation, {
      minItems: 1,
      maxItems: paymentOperations.length,
      uniqueItems: true,
      description: "What the agent may do; anything else is refused with 403 agent_operation_not_allowed.",
    }),
    currency: Currency,
    maxAmount: Amount(
      "Largest total of one invoice or payment link (sum of unit amount × quantity), in the smallest unit.",
    ),
    totalLimit: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }), Type.Null()], {
        description:
          "Largest sum over every invoice and payment link this key creates; null or absent for no total cap.",
      }),
    ),
  },
  strict,
);
export type AgentKeyRequest = Static<typeof AgentKeyRequest>;

export const AgentKey = Type.Object({
  prefix: Type.String({ description: "The first characters of the key, to tell keys apart." }),
  allowedOperations: Type.Array(Type.String()),
  currency: Type.String(),
  maxAmount: Type.Integer(),
  totalLimit: Type.Union([Type.Integer(), Type.Null()]),
  amountUsed: Type.Integer({
    description: "Sum of the invoices and payment links this key has created, in the smallest unit.",
  }),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()]),
});

export const AgentKeyWithSecret = Type.Composite([
  AgentKey,
  Type.Object({
    key: Type.String({
      description:
        "The agent key (`pak_…`), shown this once. Send it as `Authorization: Bearer` to the /payments operations.",
    }),
  }),
]);

// Listing

const ListQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  startingAfter: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: "The last id of the previous page." }),
  ),
};
const listOf = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    hasMore: Type.Boolean({ description: "More items follow; pass the last id as startingAfter." }),
  });

// Customers

export const CreateCustomerRequest = Type.Object(
  {
    email: Type.Optional(Type.String({ format: "email", maxLength: 512 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    metadata: Type.Optional(Metadata),
  },
  strict,
);
export type CreateCustomerRequest = Static<typeof CreateCustomerRequest>;

export const Customer = Type.Object({
  id: Type.String({ description: "Stripe's customer id (`cus_…`)." }),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.String()),
  createdAt: Timestamp,
});
export const CustomerList = listOf(Customer);
export const CustomerListQuery = Type.Object(
  { ...ListQuery, email: Type.Optional(Type.String({ maxLength: 512 })) },
  strict,
);
export type CustomerListQuery = Static<typeof CustomerListQuery>;

// Invoices

export const CreateInvoiceRequest = Type.Object(
  {
    customer: Type.String({ pattern: "^cus_[A-Za-z0-9]+$", description: "A customer id (`cus_…`)." }),
    currency: Currency,
    lineItems: Type.Array(
      Type.Object(
        {
          description: Type.String({ minLength: 1, maxLength: 500 }),
          unitAmount: Amount("Price of one unit, in the smallest unit."),
          quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1 })),
        },
        strict,
      ),
      { minItems: 1, maxItems: 50 },
    ),
    daysUntilDue: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 365, default: 30, description: "The customer pays within this." }),
    ),
    finalize: Type.Optional(
      Type.Boolean({
        default: false,
        description: "Finalize at once (status open, payable at hostedInvoiceUrl); else it stays a draft.",
      }),
    ),
    metadata: Type.Optional(Metadata),
  },
  strict,
);
export type CreateInvoiceRequest = Static<typeof CreateInvoiceRequest>;

export const Invoice = Type.Object({
  id: Type.String({ description: "Stripe's invoice id (`in_…`)." }),
  customer: Type.String(),
  status: Type.String({ description: "draft, open, paid, void or uncollectible." }),
  currency: Type.String(),
  total: Type.Integer({ description: "In the smallest unit." }),
  amountDue: Type.Integer(),
  hostedInvoiceUrl: Type.Union([Type.String(), Type.Null()], {
    description: "Where the customer pays; null while a draft.",
  }),
  dueDate: Type.Union([Timestamp, Type.Null()]),
  lineItems: Type.Array(
    Type.Object({
      description: Type.Union([Type.String(), Type.Null()]),
      quantity: Type.Union([Type.Integer(), Type.Null()]),
      amount: Type.Integer({ description: "Unit amount × quantity, in the smallest unit." }),
    }),
  ),
  metadata: Type.Record(Type.String(), Type.String()),
  createdAt: Timestamp,
});
export const InvoiceList = listOf(Invoice);
export const InvoiceListQuery = Type.Object(
  {
    ...ListQuery,
    customer: Type.Optional(Type.String({ pattern: "^cus_[A-Za-z0-9]+$" })),
    status: Type.Optional(
      Type.Union(["draft", "open", "paid", "uncollectible", "void"].map((status) => Type.Literal(status))),
    ),
  },
  strict,
);
export type InvoiceListQuery = Static<typeof InvoiceListQuery>;
export const InvoiceParams = Type.Object({ id: Type.String({ pattern: "^in_[A-Za-z0-9]+$" }) });

// Payment links

export const CreatePaymentLinkRequest = Type.Object(
  {
    currency: Currency,
    lineItems: Type.Array(
      Type.Object(
        {
          name: Type.String({
            minLength: 1,
            maxLength: 250,
            description: "What is sold, as the buyer sees it.",
          }),
          unitAmount: Amount("Price of one unit, in the smallest unit."),
          quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1 })),
        },
        strict,
      ),
      { minItems: 1, maxItems: 20 },
    ),
    metadata: Type.Optional(Metadata),
  },
  strict,
);
export type CreatePaymentLinkRequest = Static<typeof CreatePaymentLinkRequest>;

export const PaymentLink = Type.Object({
  id: Type.String({ description: "Stripe's payment link id (`plink_…`)." }),
  url: Type.String({ description: "The page where buyers pay." }),
  active: Type.Boolean(),
  currency: Type.String(),
  metadata: Type.Record(Type.String(), Type.String()),
});
export const PaymentLinkList = listOf(PaymentLink);
export const PaymentLinkListQuery = Type.Object(
  { ...ListQuery, active: Type.Optional(Type.Boolean()) },
  strict,
);
export type PaymentLinkListQuery = Static<typeof PaymentLinkListQuery>;
