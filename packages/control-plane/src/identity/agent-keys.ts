import { Errors, newSecret, PaddockError, sha256 } from "@paddock/common";
import type { Db, PaymentAgentKeysTable } from "@paddock/db";
import { type Selectable, sql } from "kysely";
import { ControlPlaneErrors } from "../http/errors.js";
import { AccountRows } from "../payments/account-rows.js";

/** What an agent key can be allowed to do: every operation of the /payments proxy. */
export const paymentOperations = [
  "create_customer",
  "list_customers",
  "create_invoice",
  "list_invoices",
  "finalize_invoice",
  "create_payment_link",
  "list_payment_links",
] as const;
export type PaymentOperation = (typeof paymentOperations)[number];

/** Agent keys carry their own prefix: they are told apart from API keys and sessions at a glance. */
export const agentKeyPrefix = "pak_";

export interface AgentLimits {
  allowedOperations: PaymentOperation[];
  /** Lower-case ISO 4217 code: the one currency the agent may bill in. */
  currency: string;
  /** Largest amount of one invoice or payment link, in the currency's smallest unit. */
  maxAmount: number;
  /** Largest sum over every invoice and payment link the key creates; null = no total cap. */
  totalLimit: number | null;
}

export interface AgentKeyInfo extends AgentLimits {
  prefix: string;
  /** Sum of the amounts of invoices and payment links this key has created. */
  amountUsed: number;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The agent key that authenticated a call, as the payment operations see it. */
export interface PaymentAgent extends AgentLimits {
  accountId: string;
  keyHash: string;
}

/**
 * The payments agent key: one per account, shown once and stored hashed, usable only on the
 * /payments operations and only within the limits its owner set. Issuing a new one replaces
 * the old (which stops working at once) and starts its running total from zero.
 */
export class AgentKeys {
  readonly #keys: AccountRows<"payment_agent_keys">;

  constructor(private readonly db: Db) {
    this.#keys = new AccountRows(db, "payment_agent_keys", notFound);
  }

  async issue(accountId: string, limits: AgentLimits): Promise<{ key: string; info: AgentKeyInfo }> {
    const key = newSecret(agentKeyPrefix);
    const now = new Date().toISOString();
    const row = {
      key_hash: sha256(key),
      prefix: key.slice(0, agentKeyPrefix.length + 6),
      allowed_operations: JSON.stringify([...new Set(limits.allowedOperations)]),
      currency: limits.currency,
      max_amount: limits.maxAmount,
      total_limit: limits.totalLimit,
      amount_used: 0,
      created_at: now,
      last_used_at: null,
    };
    return { key, info: toInfo(await this.#keys.put(accountId, row, row)) };
  }

  async get(accountId: string): Promise<AgentKeyInfo> {
    return toInfo(await this.#keys.get(accountId));
  }

  async revoke(accountId: string): Promise<void> {
    await this.#keys.remove(accountId);
  }

  /** The agent behind a `pak_` token; 401 for an unknown or replaced key. */
  async authenticate(token: string): Promise<PaymentAgent> {
    const hash = sha256(token);
    const row = await this.db
      .selectFrom("payment_agent_keys")
      .selectAll()
      .where("key_hash", "=", hash)
      .executeTakeFirst();
    if (!row) {
      throw new PaddockError(Errors.unauthorized, "unknown or replaced payments agent key");
    }
    await this.db
      .updateTable("payment_agent_keys")
      .set({ last_used_at: new Date().toISOString() })
      .where("key_hash", "=", hash)
      .execute();
    return { accountId: row.account_id, keyHash: hash, ...limitsOf(row) };
  }

  /**
   * Counts `amount` against the key's total cap in one conditional update (two concurrent calls
   * cannot both slip under it). Returns the undo for when the provider then refuses the call.
   */
  async reserve(agent: PaymentAgent, amount: number): Promise<() => Promise<void>> {
    const result = await this.db
      .updateTable("payment_agent_keys")
      .set({ amount_used: sql`amount_used + ${amount}` })
      .where("key_hash", "=", agent.keyHash)
      .where((eb) =>
        eb.or([eb("total_limit", "is", null), eb(sql`amount_used + ${amount}`, "<=", eb.ref("total_limit"))]),
      )
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      const used = await this.db
        .selectFrom("payment_agent_keys")
        .select("amount_used")
        .where("key_hash", "=", agent.keyHash)
        .executeTakeFirst();
      throw new PaddockError(
        ControlPlaneErrors.agentTotalLimitReached,
        `${amount} ${agent.currency} would take this agent key past its total cap of ${agent.totalLimit} (${Number(used?.amount_used ?? 0)} used)`,
      );
    }
    return async () => {
      await this.db
        .updateTable("payment_agent_keys")
        .set({ amount_used: sql`amount_used - ${amount}` })
        .where("key_hash", "=", agent.keyHash)
        .execute();
    };
  }
}

function notFound(): PaddockError {
  return new PaddockError(
    ControlPlaneErrors.agentKeyNotFound,
    "this account has no payments agent key; POST /payments/agent-key issues one",
  );
}

type AgentKeyRow = Selectable<PaymentAgentKeysTable>;

function limitsOf(row: AgentKeyRow): AgentLimits {
  return {
    allowedOperations: JSON.parse(row.allowed_operations) as PaymentOperation[],
    currency: row.currency,
    maxAmount: Number(row.max_amount),
    totalLimit: row.total_limit === null ? null : Number(row.total_limit),
  };
}

function toInfo(row: AgentKeyRow): AgentKeyInfo {
  return {
    prefix: row.prefix,
    ...limitsOf(row),
    amountUsed: Number(row.amount_used),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}
