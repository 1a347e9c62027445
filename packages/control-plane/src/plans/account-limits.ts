import { type PaddockConfig, PaddockError } from "@paddock/common";
import type { Db } from "@paddock/db";
import type { SandboxQuota, TemplateQuota } from "@paddock/runtime";
import type { FastifyRequest } from "fastify";
import { principalOf } from "../http/auth-hook.js";
import { clientOf } from "../http/client-address.js";
import { ControlPlaneErrors } from "../http/errors.js";
import type { RateCounters, RateHit } from "../http/rate-limit.js";
import { type PlanLifecycle, planLifecycle, planLimits, planOfAccount } from "./plans.js";

/** What the operator configured: `[plans]` and `[rate_limits]`. */
export type LimitSettings = Pick<PaddockConfig, "plans" | "rate_limits">;

/** Calls counted per credential and per account. */
export type MeteredCall = "creates" | "commands" | "file_calls";

const callNames: Record<MeteredCall, string> = {
  creates: "sandbox creates",
  commands: "commands",
  file_calls: "file calls",
};

/**
 * An account's limits, on every surface that starts work: what its plan lets it hold at once
 * (sandboxes, their disk, API keys: checked where they are written) and how fast it may create
 * sandboxes, run commands and call files (counted per credential and per account in the shared
 * counters). Sign-ups are counted per client address. The plan is read on every call, so a move
 * to another plan applies at once.
 */
export class AccountLimits {
  constructor(
    private readonly db: Db,
    private readonly counters: RateCounters,
    private readonly settings: LimitSettings,
  ) {}

  /** What the account's plan lets it hold at once (sandboxes, volumes, their disk), for the runtime to check as it writes. */
  async sandboxQuota(accountId: string): Promise<SandboxQuota> {
    const plan = await planOfAccount(this.db, accountId);
    const limits = planLimits(this.settings.plans, plan.id);
    return {
      plan: plan.name,
      maxSandboxes: limits.maxSandboxes,
      maxDiskBytes: limits.maxDiskBytes,
      maxVolumes: limits.maxVolumes,
    };
  }

  /** The idle timeout and paused retention a create without its own gets, from the account's plan. */
  async lifecycleDefaults(accountId: string): Promise<PlanLifecycle> {
    const plan = await planOfAccount(this.db, accountId);
    return planLifecycle(this.settings.plans, plan.id);
  }

  /** How many templates the account's plan lets it keep, and builds run at once (decision 0198). */
  async templateQuota(accountId: string): Promise<TemplateQuota> {
    const plan = await planOfAccount(this.db, accountId);
    const limits = planLimits(this.settings.plans, plan.id);
    return { plan: plan.name, maxTemplates: limits.maxTemplates, maxBuilds: limits.maxTemplateBuilds };
  }

  async apiKeyLimit(accountId: string): Promise<{ plan: string; max: number }> {
    const plan = await planOfAccount(this.db, accountId);
    return { plan: plan.name, max: planLimits(this.settings.plans, plan.id).maxApiKeys };
  }

  /**
   * Counts a call against its credential's budget and its account's; refuses one past either
   * with 429 `rate_limited` and the seconds to wait.
   */
  async charge(call: MeteredCall, accountId: string, credential: string): Promise<void> {
    const rates = this.settings.rate_limits;
    const windowSeconds = rates.window_seconds;
    await this.enforce(
      [
        { key: `${call}:credential:${credential}`, rule: { limit: rates[`${call}_per_key`], windowSeconds } },
        { key: `${call}:account:${accountId}`, rule: { limit: rates[`${call}_per_account`], windowSeconds } },
      ],
      (wait) => {
        const limits = [
          [rates[`${call}_per_key`], "per key"],
          [rates[`${call}_per_account`], "per account"],
        ].filter(([limit]) => Number(limit) > 0);
        return `too many ${callNames[call]}: at most ${limits.map(([limit, per]) => `${limit} ${per}`).join(" and ")} every ${windowSeconds} s; retry in ${wait} s`;
      },
    );
  }

  /** An onRequest hook (after authentication) that charges the route's call to its caller. */
  hook(call: MeteredCall) {
    return async (request: FastifyRequest) => {
      const principal = principalOf(request);
      await this.charge(call, principal.accountId, principal.credential);
    };
  }

  /** Counts a sign-up attempt from a client address. */
  async chargeSignup(address: string): Promise<void> {
    const limit = this.settings.rate_limits.signups_per_address_per_hour;
    await this.enforce(
      [{ key: `signups:${clientOf(address)}`, rule: { limit, windowSeconds: 3600 } }],
      (wait) => `too many sign-ups from this address (at most ${limit} an hour); retry in ${wait} s`,
    );
  }

  private async enforce(hits: RateHit[], message: (wait: number) => string): Promise<void> {
    const wait = await this.counters.hit(hits);
    if (wait > 0)
      throw new PaddockError(ControlPlaneErrors.rateLimited, message(wait), { retryAfterSeconds: wait });
  }
}
