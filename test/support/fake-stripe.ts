import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for the part of Stripe's HTTP API that Paddock calls (the one fake the test
 * suite allows; no test machine can reach Stripe). It follows Stripe's documented wire format:
 * form-encoded bodies with bracket notation, `Authorization: Bearer <secret key>`, ids with
 * Stripe's prefixes, `{object: "list", data, has_more}` envelopes, `Idempotency-Key` replays and
 * errors as `{error: {type, message, code, param}}`. Each key belongs to an account whose objects
 * only that account's keys see.
 */

type Params = Record<string, unknown>;
type StripeObject = Record<string, unknown> & { id: string; created?: number };

export interface RecordedRequest {
  method: string;
  path: string;
  /** The secret key the request was made with (as sent). */
  key: string | null;
  /** The account the key belongs to, when Stripe would accept it. */
  account: string | null;
  params: Params;
  idempotencyKey: string | null;
  status: number;
}

interface Account {
  livemode: boolean;
  prices: Set<string>;
  customers: StripeObject[];
  invoices: StripeObject[];
  invoiceItems: StripeObject[];
  paymentLinks: StripeObject[];
  checkoutSessions: StripeObject[];
}

class StripeFailure extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code?: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

const now = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("base64url").replace(/[-_]/g, "x")}`;

/** `a[b][0][c]=v` → `{a: {b: [{c: "v"}]}}`: Stripe's bracket notation; values stay strings. */
export function decodeForm(text: string): Params {
  const root: Params = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const path = name.split(/\[|\]\[|\]$/).filter((part, index) => index === 0 || part !== "");
    let node: Record<string, unknown> = root;
    const last = path.pop() as string;
    for (const part of path) {
      if (!node[part] || typeof node[part] !== "object") node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[last] = value;
  }
  return arraysOf(root) as Params;
}

/** Objects whose keys are 0..n-1 were arrays on the client's side. */
function arraysOf(value: unknown): unknown {
  if (!value || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, arraysOf(v)] as const);
  const indexed = entries.length > 0 && entries.every(([k], i) => k === String(i));
  return indexed ? entries.map(([, v]) => v) : Object.fromEntries(entries);
}

function missing(param: string): StripeFailure {
  return new StripeFailure(
    400,
    "invalid_request_error",
    `Missing required param: ${param}.`,
    "parameter_missing",
    param,
  );
}

function integer(params: Params, name: string, path = name): number | undefined {
  const raw = params[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !/^-?\d+$/.test(raw)) {
    throw new StripeFailure(
      400,
      "invalid_request_error",
      `Invalid integer: ${String(raw)}`,
      "parameter_invalid_integer",
      path,
    );
  }
  return Number(raw);
}

function text(params: Params, name: string): string | null {
  const raw = params[name];
  return typeof raw === "string" ? raw : null;
}

function metadataOf(params: Params): Record<string, string> {
  return (params.metadata && typeof params.metadata === "object" ? params.metadata : {}) as Record<
    string,
    string
  >;
}

/** The header Stripe signs a webhook with: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.payload">`. */
export function webhookSignature(payload: string, secret: string, timestamp = now()): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

/** A webhook event's body, as Stripe sends it. */
export function webhookEvent(
  type: string,
  object: Record<string, unknown>,
  id = `evt_${randomBytes(12).toString("hex")}`,
): string {
  return JSON.stringify({
    id,
    object: "event",
    api_version: "2026-10-28.endive",
    created: now(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  });
}

export class FakeStripe {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly keys = new Map<string, string>();
  private readonly accounts = new Map<string, Account>();
  private readonly idempotent = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  private failures: Array<{ failure: StripeFailure; path: string | undefined }> = [];
  url = "";

  private constructor() {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  static async start(): Promise<FakeStripe> {
    const fake = new FakeStripe();
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A new test-mode account with one secret key; returns the key. */
  addAccount(name: string, options: { livemode?: boolean; prices?: string[] } = {}): string {
    const key = `sk_${options.livemode ? "live" : "test"}_${randomBytes(18).toString("hex")}`;
    this.accounts.set(name, {
      livemode: options.livemode ?? false,
      prices: new Set(options.prices ?? []),
      customers: [],
      invoices: [],
      invoiceItems: [],
      paymentLinks: [],
      checkoutSessions: [],
    });
    this.keys.set(key, name);
    return key;
  }

  /** Stripe stops accepting the key (rolled or deleted in the dashboard). */
  revokeKey(key: string): void {
    this.keys.delete(key);
  }

  /** The account's objects, as Stripe holds them. */
  account(name: string): Account {
    const account = this.accounts.get(name);
    if (!account) throw new Error(`no fake Stripe account ${name}`);
    return account;
  }

  /** A customer, as Stripe creates one for a buyer during checkout; returns its id. */
  addCustomer(accountName: string, email: string): string {
    return this.createCustomer(this.account(accountName), { email }).id;
  }

  /** The next request (to `path`, if given) answers with this error (e.g. 500 api_error) instead of being served. */
  failNext(status: number, type: string, message: string, path?: string): void {
    this.failures.push({ failure: new StripeFailure(status, type, message), path });
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? "/", "http://stripe.invalid");
    const method = request.method ?? "GET";
    const bodyText = Buffer.concat(chunks).toString("utf8");
    const params =
      method === "GET" || method === "DELETE" ? decodeForm(url.search.slice(1)) : decodeForm(bodyText);
    const key = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1] ?? null;
    const accountName = key ? (this.keys.get(key) ?? null) : null;
    const idempotencyKey = (request.headers["idempotency-key"] as string | undefined) ?? null;
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      key,
      account: accountName,
      params,
      idempotencyKey,
      status: 0,
    };
    this.requests.push(record);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      response.writeHead(status, {
        "content-type": "application/json",
        "request-id": newId("req"),
        ...headers,
      });
      response.end(JSON.stringify(body));
    };
    try {
      if (!key) {
        throw new StripeFailure(
          401,
          "invalid_request_error",
          "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth.",
        );
      }
      if (!accountName) {
        throw new StripeFailure(
          401,
          "invalid_request_error",
          `Invalid API Key provided: ${key.slice(0, 8)}${"*".repeat(12)}${key.slice(-4)}`,
        );
      }
      const injected = this.failures.findIndex((f) => f.path === undefined || f.path === url.pathname);
      if (injected >= 0) throw this.failures.splice(injected, 1)[0]?.failure;
      const replayKey = idempotencyKey && method === "POST" ? `${accountName}\0${idempotencyKey}` : null;
      const fingerprint = `${method} ${url.pathname} ${bodyText}`;
      const earlier = replayKey ? this.idempotent.get(replayKey) : undefined;
      if (earlier) {
        if (earlier.fingerprint !== fingerprint) {
          throw new StripeFailure(
            400,
            "idempotency_error",
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
          );
        }
        return send(earlier.status, earlier.body, { "idempotent-replayed": "true" });
      }
      const body = this.route(this.account(accountName), method, url.pathname, params);
      if (replayKey) this.idempotent.set(replayKey, { fingerprint, status: 200, body });
      return send(200, body);
    } catch (error) {
      if (!(error instanceof StripeFailure)) {
        return send(500, { error: { type: "api_error", message: String(error) } });
      }
      const { status, type, message, code, param } = error;
      return send(status, {
        error: { type, message, ...(code ? { code } : {}), ...(param ? { param } : {}) },
      });
    }
  }

  private route(account: Account, method: string, path: string, params: Params): unknown {
    const segments = path.split("/").filter(Boolean);
    const [version, resource, id, action] = segments;
    const is = (m: string, r: string, withId: boolean, a?: string) =>
      method === m && resource === r && Boolean(id) === withId && action === a && segments.length <= 4;
    if (version !== "v1") throw unrecognized(method, path);
    if (is("GET", "balance", false)) {
      const amounts = [{ amount: 0, currency: "usd", source_types: { card: 0 } }];
      return { object: "balance", available: amounts, pending: amounts, livemode: account.livemode };
    }
    if (method === "POST" && path === "/v1/checkout/sessions")
      return this.createCheckoutSession(account, params);
    if (is("POST", "customers", false)) return this.createCustomer(account, params);
    if (is("GET", "customers", false)) {
      const email = text(params, "email");
      return list(
        account.customers.filter((c) => !email || c.email === email),
        params,
        path,
      );
    }
    if (is("GET", "customers", true)) return find(account.customers, id as string, "customer");
    if (is("POST", "invoices", false)) return this.createInvoice(account, params);
    if (is("GET", "invoices", false)) {
      const customer = text(params, "customer");
      const status = text(params, "status");
      const invoices = account.invoices.filter(
        (invoice) => (!customer || invoice.customer === customer) && (!status || invoice.status === status),
      );
      return list(invoices, params, path);
    }
    if (is("GET", "invoices", true)) return find(account.invoices, id as string, "invoice");
    if (is("DELETE", "invoices", true)) {
      const invoice = find(account.invoices, id as string, "invoice");
      if (invoice.status !== "draft") {
        throw new StripeFailure(
          400,
          "invalid_request_error",
          "You can only delete draft invoices.",
          "invoice_not_editable",
        );
      }
      account.invoices = account.invoices.filter((other) => other !== invoice);
      return { id: invoice.id, object: "invoice", deleted: true };
    }
    if (is("POST", "invoices", true, "finalize")) return this.finalizeInvoice(account, id as string);
    if (is("POST", "invoiceitems", false)) return this.createInvoiceItem(account, params);
    if (is("POST", "payment_links", false)) return this.createPaymentLink(account, params);
    if (is("GET", "payment_links", false)) {
      const active = text(params, "active");
      return list(
        account.paymentLinks.filter((link) => active === null || String(link.active) === active),
        params,
        path,
      );
    }
    throw unrecognized(method, path);
  }

  private createCheckoutSession(account: Account, params: Params): StripeObject {
    const mode = text(params, "mode");
    if (!mode) throw missing("mode");
    const lineItems = (params.line_items ?? []) as Params[];
    if (!Array.isArray(lineItems) || lineItems.length === 0) throw missing("line_items");
    lineItems.forEach((line, index) => {
      const price = text(line, "price");
      if (!price || !account.prices.has(price)) {
        throw new StripeFailure(
          400,
          "invalid_request_error",
          `No such price: '${String(price)}'`,
          "resource_missing",
          `line_items[${index}][price]`,
        );
      }
    });
    const customer = text(params, "customer");
    if (customer) find(account.customers, customer, "customer", "customer", 400);
    const id = newId(account.livemode ? "cs_live" : "cs_test");
    const session: StripeObject = {
      id,
      object: "checkout.session",
      mode,
      status: "open",
      payment_status: "unpaid",
      url: `https://checkout.stripe.com/c/pay/${id}`,
      client_reference_id: text(params, "client_reference_id"),
      customer,
      customer_email: text(params, "customer_email"),
      subscription: null,
      metadata: metadataOf(params),
      line_items_requested: lineItems,
      subscription_data: params.subscription_data ?? null,
      success_url: text(params, "success_url"),
      cancel_url: text(params, "cancel_url"),
      livemode: account.livemode,
      created: now(),
    };
    account.checkoutSessions.unshift(session);
    return session;
  }

  private createCustomer(account: Account, params: Params): StripeObject {
    const customer: StripeObject = {
      id: newId("cus"),
      object: "customer",
      email: text(params, "email"),
      name: text(params, "name"),
      description: text(params, "description"),
      metadata: metadataOf(params),
      livemode: account.livemode,
      created: now(),
    };
    account.customers.unshift(customer);
    return customer;
  }

  private createInvoice(account: Account, params: Params): StripeObject {
    const customer = text(params, "customer");
    if (!customer) throw missing("customer");
    find(account.customers, customer, "customer", "customer", 400);
    const collection = text(params, "collection_method") ?? "charge_automatically";
    const daysUntilDue = integer(params, "days_until_due");
    if (collection === "send_invoice" && daysUntilDue === undefined) {
      throw new StripeFailure(
        400,
        "invalid_request_error",
        "Missing required param: days_until_due (or due_date) when collection_method is send_invoice.",
        "parameter_missing",
        "days_until_due",
      );
    }
    const invoice: StripeObject = {
      id: newId("in"),
      object: "invoice",
      customer,
      currency: text(params, "currency") ?? "usd",
      status: "draft",
      collection_method: collection,
      days_until_due: daysUntilDue ?? null,
      auto_advance: text(params, "auto_advance") !== "false",
      due_date: null,
      total: 0,
      subtotal: 0,
      amount_due: 0,
      hosted_invoice_url: null,
      lines: { object: "list", data: [], has_more: false, url: "" },
      metadata: metadataOf(params),
      livemode: account.livemode,
      created: now(),
    };
    (invoice.lines as Params).url = `/v1/invoices/${invoice.id}/lines`;
    account.invoices.unshift(invoice);
    return invoice;
  }

  private createInvoiceItem(account: Account, params: Params): StripeObject {
    const customer = text(params, "customer");
    if (!customer) throw missing("customer");
    find(account.customers, customer, "customer", "customer", 400);
    const invoiceId = text(params, "invoice");
    const invoice = invoiceId ? find(account.invoices, invoiceId, "invoice", "invoice", 400) : null;
    if (invoice && invoice.status !== "draft") {
      throw new StripeFailure(
        400,
        "invalid_request_error",
        `You can only add invoice items to draft invoices; ${invoice.id} is ${String(invoice.status)}.`,
        "invoice_not_editable",
        "invoice",
      );
    }
    if (invoice && invoice.customer !== customer) {
      throw new StripeFailure(
        400,
        "invalid_request_error",
        "The invoice belongs to another customer.",
        undefined,
        "invoice",
      );
    }
    const quantity = integer(params, "quantity") ?? 1;
    const unit = text(params, "unit_amount_decimal");
    const amount =
      unit !== null
        ? Math.round(Number(unit) * quantity)
        : (integer(params, "amount") ??
          (() => {
            throw missing("amount");
          })());
    const item: StripeObject = {
      id: newId("ii"),
      object: "invoiceitem",
      customer,
      invoice: invoice?.id ?? null,
      currency: text(params, "currency") ?? "usd",
      description: text(params, "description"),
      quantity,
      amount,
      livemode: account.livemode,
      date: now(),
    };
    account.invoiceItems.unshift(item);
    if (invoice) {
      const lines = invoice.lines as { data: Params[] };
      lines.data.push({
        id: newId("il"),
        object: "line_item",
        invoice_item: item.id,
        description: item.description,
        quantity,
        amount,
        currency: item.currency,
      });
      const total = lines.data.reduce((sum, line) => sum + (line.amount as number), 0);
      Object.assign(invoice, { total, subtotal: total, amount_due: total });
    }
    return item;
  }

  private finalizeInvoice(account: Account, id: string): StripeObject {
    const invoice = find(account.invoices, id, "invoice");
    if (invoice.status !== "draft") {
      throw new StripeFailure(
        400,
        "invalid_request_error",
        "This invoice is already finalized, you can't re-finalize a non-draft invoice.",
        "invoice_unexpected_state",
      );
    }
    Object.assign(invoice, {
      status: "open",
      hosted_invoice_url: `https://invoice.stripe.com/i/${invoice.id}`,
      due_date:
        invoice.days_until_due === null ? null : now() + (invoice.days_until_due as number) * 24 * 3600,
    });
    return invoice;
  }

  private createPaymentLink(account: Account, params: Params): StripeObject {
    const lineItems = params.line_items as Params[] | undefined;
    if (!Array.isArray(lineItems) || lineItems.length === 0) throw missing("line_items");
    const currencies = new Set<string>();
    lineItems.forEach((line, index) => {
      const priceData = line.price_data as Params | undefined;
      if (!line.price && !priceData) throw missing(`line_items[${index}][price]`);
      if (priceData) {
        if (!text(priceData, "currency")) throw missing(`line_items[${index}][price_data][currency]`);
        integer(priceData, "unit_amount", `line_items[${index}][price_data][unit_amount]`);
        currencies.add(text(priceData, "currency") as string);
      }
      integer(line, "quantity", `line_items[${index}][quantity]`);
    });
    const id = newId("plink");
    const link: StripeObject = {
      id,
      object: "payment_link",
      active: true,
      currency: [...currencies][0] ?? "usd",
      url: `https://buy.stripe.com/${account.livemode ? "" : "test_"}${id.slice(6)}`,
      metadata: metadataOf(params),
      line_items_requested: lineItems,
      livemode: account.livemode,
    };
    account.paymentLinks.unshift(link);
    return link;
  }
}

function unrecognized(method: string, path: string): StripeFailure {
  return new StripeFailure(404, "invalid_request_error", `Unrecognized request URL (${method}: ${path}).`);
}

function find(objects: StripeObject[], id: string, kind: string, param?: string, status = 404): StripeObject {
  const found = objects.find((object) => object.id === id);
  if (!found)
    throw new StripeFailure(
      status,
      "invalid_request_error",
      `No such ${kind}: '${id}'`,
      "resource_missing",
      param ?? "id",
    );
  return found;
}

/** Stripe's list envelope over newest-first objects, with `limit` and `starting_after`. */
function list(objects: StripeObject[], params: Params, url: string) {
  const limit = integer(params, "limit") ?? 10;
  if (limit < 1 || limit > 100) {
    throw new StripeFailure(
      400,
      "invalid_request_error",
      "Invalid limit: must be between 1 and 100.",
      undefined,
      "limit",
    );
  }
  const after = text(params, "starting_after");
  let start = 0;
  if (after) {
    const index = objects.findIndex((object) => object.id === after);
    if (index < 0) find(objects, after, "object", "starting_after", 404);
    start = index + 1;
  }
  const data = objects.slice(start, start + limit);
  return { object: "list", data, has_more: start + limit < objects.length, url };
}
