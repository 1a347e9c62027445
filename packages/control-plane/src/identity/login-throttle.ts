import { createHmac } from "node:crypto";
import { type PaddockConfig, PaddockError } from "@paddock/common";
import type { Db } from "@paddock/db";
import { clientOf } from "../http/client-address.js";
import { ControlPlaneErrors } from "../http/errors.js";
import type { RateCounters, RateHit } from "../http/rate-limit.js";

/** How long an address an account logged in from stays known after its last login there. */
const knownForMs = 90 * 24 * 3600 * 1000;

export interface LoginAttempt {
  /** The password was right: the attempt is not counted, and the address becomes known. */
  succeeded(): Promise<void>;
}

/**
 * Slows password guessing without letting a guesser lock an account's owner out. Every attempt is
 * counted before its password is checked, and taken back when it was right or was refused, so
 * only failures spend a budget, and parallel guesses cannot all slip in before the count:
 * - per email and client address, always;
 * - per email, and per client address, only from addresses that have never logged in to that
 *   account: the owner logging in from where they logged in before meets only the first budget,
 *   which a guesser elsewhere cannot spend.
 * Known addresses are kept per account as keyed hashes (HMAC with the server's secret), never as
 * addresses.
 */
export class LoginThrottle {
  constructor(
    private readonly db: Db,
    private readonly counters: RateCounters,
    private readonly secret: string,
    private readonly rates: PaddockConfig["rate_limits"],
  ) {}

  /** Counts an attempt on `email` (of `accountId`, when it exists); 429 `rate_limited` when a budget is spent. */
  async begin(email: string, accountId: string | undefined, address: string): Promise<LoginAttempt> {
    const client = clientOf(address);
    // Asked for unknown emails too, so the time taken does not tell whether the account exists.
    const addressHash = createHmac("sha256", this.secret)
      .update(`${accountId ?? ""}\n${client}`)
      .digest("base64url");
    const known = await this.db
      .selectFrom("login_addresses")
      .select("account_id")
      .where("account_id", "=", accountId ?? "")
      .where("address_hash", "=", addressHash)
      .where("last_seen_at", ">", new Date(Date.now() - knownForMs).toISOString())
      .executeTakeFirst();
    const perMinute = (limit: number) => ({ limit, windowSeconds: 60 });
    const hits: RateHit[] = [
      { key: `login:${email}:${client}`, rule: perMinute(this.rates.login_failures_per_minute) },
    ];
    if (!known) {
      hits.push(
        { key: `login-email:${email}`, rule: perMinute(this.rates.login_failures_per_email_per_minute) },
        { key: `login-address:${client}`, rule: perMinute(this.rates.login_failures_per_address_per_minute) },
      );
    }
    const wait = await this.counters.hit(hits);
    if (wait > 0) {
      // A refused attempt checks no password: it spends nothing, so one address past its own
      // budget cannot go on to spend the email's.
      await this.counters.refund(hits);
      throw new PaddockError(ControlPlaneErrors.rateLimited, `too many failed logins; retry in ${wait} s`, {
        retryAfterSeconds: wait,
      });
    }
    return {
      succeeded: async () => {
        await this.counters.refund(hits);
        if (!accountId) return;
        const now = new Date();
        await this.db
          .insertInto("login_addresses")
          .values({ account_id: accountId, address_hash: addressHash, last_seen_at: now.toISOString() })
          .onConflict((conflict) =>
            conflict.columns(["account_id", "address_hash"]).doUpdateSet({ last_seen_at: now.toISOString() }),
          )
          .execute();
        await this.db
          .deleteFrom("login_addresses")
          .where("account_id", "=", accountId)
          .where("last_seen_at", "<=", new Date(now.getTime() - knownForMs).toISOString())
          .execute();
      },
    };
  }
}
