import { PaddockError, Periodic, pageOf } from "@paddock/common";
import type { Db, Lease } from "@paddock/db";
import { periodOf, type SandboxOperations, type UsageLedger } from "@paddock/runtime";
import type { FastifyBaseLogger } from "fastify";
import { ControlPlaneErrors } from "../http/errors.js";
import { type Plan, planOfAccount } from "../plans/plans.js";

type Logger = Pick<FastifyBaseLogger, "info" | "debug" | "warn">;

export interface UsagePolicy {
  /** Minutes the Free plan includes per period (`[plans] free_minutes`); others come from plans.ts. */
  freeMinutes: number;
  /** How often accounts past their minutes have their running sandboxes paused. */
  enforceIntervalMs: number;
}

export const defaultUsagePolicy: UsagePolicy = { freeMinutes: 100, enforceIntervalMs: 5000 };

const msPerMinute = 60_000;
/** Minutes on the wire carry four decimals (6 ms): enough to watch a short sandbox grow. */
const minutes = (ms: number) => Math.round((ms / msPerMinute) * 10_000) / 10_000;

/**
 * Plans meet metered time here: an account's allowance for the period, the refusal of creates
 * and resumes once it is used up, and the sweep that pauses the running sandboxes of accounts
 * past it. The plan is read on every call, so a move to another plan applies at once. Among
 * replicas, the holder of `lease` sweeps.
 */
export class Usage {
  private readonly sweeps: Periodic;

  constructor(
    private readonly db: Db,
    private readonly ledger: UsageLedger,
    private readonly sandboxes: SandboxOperations,
    private readonly policy: UsagePolicy,
    private readonly logger: Logger,
    private readonly lease: Lease,
  ) {
    this.sweeps = new Periodic(
      () => this.enforce(),
      policy.enforceIntervalMs,
      (error) => this.logger.warn({ err: error }, "enforcing usage limits failed"),
    );
  }

  /** Included minutes per period; null means no limit. */
  includedMinutes(plan: Plan): number | null {
    return plan.id === "free" ? this.policy.freeMinutes : plan.includedMinutes;
  }

  async summary(accountId: string, at = new Date()) {
    const plan = await planOfAccount(this.db, accountId);
    const included = this.includedMinutes(plan);
    const { runningMs, running } = await this.ledger.accountUsage(accountId, at);
    const days = await this.ledger.accountDays(accountId, at);
    const period = periodOf(at);
    const resumes = await this.db
      .selectFrom("account_resumes")
      .select("resumes")
      .where("account_id", "=", accountId)
      .where("period", "=", period.id)
      .executeTakeFirst();
    return {
      period: { id: period.id, start: period.start.toISOString(), end: period.end.toISOString() },
      plan: { id: plan.id, name: plan.name },
      usedMinutes: minutes(runningMs),
      includedMinutes: included,
      remainingMinutes: included === null ? null : Math.max(0, minutes(included * msPerMinute - runningMs)),
      limitReached: included !== null && runningMs >= included * msPerMinute,
      runningSandboxes: running,
      resumes: Number(resumes?.resumes ?? 0),
      days: days.map(({ day, runningMs }) => ({ date: day, minutes: minutes(runningMs) })),
    };
  }

  async sandboxPage(accountId: string, page: number, pageSize: number) {
    const { items, totalItems } = await this.ledger.sandboxUsage(accountId, { page, pageSize });
    return {
      period: periodOf(new Date()).id,
      items: items.map(({ runningMs, ...item }) => ({ ...item, minutes: minutes(runningMs) })),
      pagination: pageOf(page, pageSize, totalItems),
    };
  }

  /** Refuses work that would start running time once the account's minutes are used up. */
  async assertCanRun(accountId: string, operation: "create" | "resume"): Promise<void> {
    if (await this.overLimit(accountId)) {
      throw new PaddockError(
        ControlPlaneErrors.usageLimitReached,
        `cannot ${operation} a sandbox: this account has used the sandbox minutes its plan includes for this month (GET /usage); move to a plan with more minutes or wait for the next month`,
      );
    }
  }

  /**
   * Counts a resume of one of the account's sandboxes, asked or on use, as it starts. Counting
   * never fails the resume: a lost count is logged.
   */
  async countResume(accountId: string, at = new Date()): Promise<void> {
    await this.db
      .insertInto("account_resumes")
      .values({ account_id: accountId, period: periodOf(at).id, resumes: 1 })
      .onConflict((oc) =>
        oc
          .columns(["account_id", "period"])
          .doUpdateSet((eb) => ({ resumes: eb("account_resumes.resumes", "+", 1) })),
      )
      .execute()
      .catch((error) => this.logger.warn({ accountId, err: error }, "counting a resume failed"));
  }

  start(): void {
    this.sweeps.start();
  }

  async stop(): Promise<void> {
    await this.sweeps.stop();
  }

  /** Pauses (never deletes) the running sandboxes of every account past its minutes. */
  async enforce(): Promise<void> {
    if (!this.lease.held()) return;
    try {
      for (const accountId of await this.ledger.accountsRunning()) {
        if (!(await this.overLimit(accountId))) continue;
        const { items } = await this.sandboxes.list({
          owner: accountId,
          states: ["Running"],
          pageSize: 10_000,
        });
        for (const sandbox of items) {
          await this.sandboxes.pause(sandbox.id, accountId).then(
            () => this.logger.info({ sandboxId: sandbox.id, accountId }, "paused: plan minutes used up"),
            // It changed state meanwhile (deleted, already pausing); the next sweep looks again.
            (error) => this.logger.debug({ sandboxId: sandbox.id, err: error }, "usage pause skipped"),
          );
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, "usage enforcement sweep failed");
    }
  }

  private async overLimit(accountId: string): Promise<boolean> {
    const included = this.includedMinutes(await planOfAccount(this.db, accountId));
    if (included === null) return false;
    return (await this.ledger.accountUsage(accountId)).runningMs >= included * msPerMinute;
  }
}
