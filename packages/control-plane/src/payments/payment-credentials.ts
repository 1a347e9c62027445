import { PaddockError } from "@paddock/common";
import type { Db } from "@paddock/db";
import type Stripe from "stripe";
import { paymentProviderFailure, stripeClient } from "../billing/stripe-client.js";
import { ControlPlaneErrors } from "../http/errors.js";
import { SealedBox } from "../secrets/sealed-box.js";
import { AccountRows } from "./account-rows.js";

export interface PaymentCredentialInfo {
  provider: "stripe";
  /** e.g. `sk_test_…1234`: the only form of the key that ever leaves the server. */
  maskedKey: string;
  livemode: boolean;
  createdAt: string;
  updatedAt: string;
}

/** `sk_test_…1234`: the kind of key (secret or restricted, test or live) and its last four characters. */
export function maskKey(secretKey: string): string {
  const kind = /^[a-z]+_(test|live)_/.exec(secretKey)?.[0] ?? "";
  return `${kind}…${secretKey.slice(-4)}`;
}

/**
 * Each account's own Stripe secret key (bring your own key): verified with Stripe before it is
 * kept, sealed at rest under `payments:<accountId>`, opened only to call Stripe for that account.
 */
export class PaymentCredentials {
  readonly #box: SealedBox;
  readonly #credentials: AccountRows<"payment_credentials">;

  constructor(
    db: Db,
    serverSecretKey: string,
    private readonly apiBase: string,
  ) {
    this.#box = new SealedBox(serverSecretKey);
    this.#credentials = new AccountRows(db, "payment_credentials", notFound);
  }

  /** Verifies the key (a balance read) and stores it, replacing any earlier one. */
  async set(accountId: string, secretKey: string): Promise<PaymentCredentialInfo> {
    let livemode: boolean;
    try {
      livemode = (await stripeClient(secretKey, this.apiBase).balance.retrieve()).livemode;
    } catch (error) {
      const failure = paymentProviderFailure(error);
      if (
        failure instanceof PaddockError &&
        failure.code === ControlPlaneErrors.paymentCredentialsInvalid.code
      ) {
        throw new PaddockError(
          ControlPlaneErrors.paymentCredentialsInvalid,
          "Stripe refused this key (unknown, revoked, or unable to read the balance); nothing was stored",
        );
      }
      throw failure;
    }
    const now = new Date().toISOString();
    const row = {
      provider: "stripe",
      sealed_key: this.#box.seal(secretKey, context(accountId)),
      masked_key: maskKey(secretKey),
      livemode: livemode ? 1 : 0,
      updated_at: now,
    };
    return toInfo(await this.#credentials.put(accountId, { ...row, created_at: now }, row));
  }

  async get(accountId: string): Promise<PaymentCredentialInfo> {
    return toInfo(await this.#credentials.get(accountId));
  }

  async delete(accountId: string): Promise<void> {
    await this.#credentials.remove(accountId);
  }

  /** A Stripe client on the account's own key; `payments_not_connected` when none is stored. */
  async clientFor(accountId: string): Promise<Stripe> {
    const { sealed_key } = await this.#credentials.get(accountId, notConnected);
    return stripeClient(this.#box.open(sealed_key, context(accountId)), this.apiBase);
  }
}

function context(accountId: string): string {
  return `payments:${accountId}`;
}

function notFound(): PaddockError {
  return new PaddockError(
    ControlPlaneErrors.paymentCredentialsNotFound,
    "no Stripe key is stored for this account; PUT /payments/credentials stores one",
  );
}

function notConnected(): PaddockError {
  return new PaddockError(
    ControlPlaneErrors.paymentsNotConnected,
    "this account has no Stripe key stored; the account owner sets one with PUT /payments/credentials",
  );
}

function toInfo(row: {
  masked_key: string;
  livemode: number;
  created_at: string;
  updated_at: string;
}): PaymentCredentialInfo {
  return {
    provider: "stripe",
    maskedKey: row.masked_key,
    livemode: Boolean(row.livemode),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
