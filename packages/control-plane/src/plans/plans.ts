import { type PaddockConfig, parseMemoryBytes } from "@paddock/common";
import type { Db } from "@paddock/db";
/**
 * The platform's plans. An account's plan id is stored on its row (`accounts.plan`); usage
 * enforcement reads allowances from here and billing moves accounts between plans.
 */
export const planIds = ["free", "pro"] as const;
export type PlanId = (typeof planIds)[number];

export interface Plan {
  id: PlanId;
  name: string;
  /** Monthly price in the smallest currency unit; 0 for free plans. */
  priceCents: number;
  currency: "usd";
  /** Sandbox minutes included per period; null means no limit. */
  includedMinutes: number | null;
}

export const plans: Record<PlanId, Plan> = {
  free: { id: "free", name: "Free", priceCents: 0, currency: "usd", includedMinutes: 100 },
  pro: { id: "pro", name: "Pro", priceCents: 2000, currency: "usd", includedMinutes: null },
};

export function isPlanId(value: string): value is PlanId {
  return (planIds as readonly string[]).includes(value);
}

/** The plan for a stored plan id; an unknown id (a plan since retired) is treated as Free. */
export function planOf(id: string): Plan {
  return isPlanId(id) ? plans[id] : plans.free;
}

/** What an account on a plan may hold at once (`[plans] <plan>_max_*`). */
export interface PlanLimits {
  maxSandboxes: number;
  /** Sum of its sandboxes' disk quotas, in bytes; null: no cap. */
  maxDiskBytes: number | null;
  maxApiKeys: number;
}

/** The limits of a plan as the operator configured them. */
export function planLimits(settings: PaddockConfig["plans"], plan: PlanId): PlanLimits {
  const disk = settings[`${plan}_max_disk`];
  return {
    maxSandboxes: settings[`${plan}_max_sandboxes`],
    maxDiskBytes: disk ? (parseMemoryBytes(disk) ?? null) : null,
    maxApiKeys: settings[`${plan}_max_api_keys`],
  };
}

/**
 * What a sandbox created on a plan gets when its create leaves `lifecycle.idleTimeout` or
 * `lifecycle.maxPaused` out (`[plans] <plan>_idle_timeout_seconds`, `<plan>_max_paused_days`), in
 * seconds; null (configured as 0): never.
 */
export interface PlanIdlePolicy {
  idleTimeout: number | null;
  maxPaused: number | null;
}

export function planIdlePolicy(settings: PaddockConfig["plans"], plan: PlanId): PlanIdlePolicy {
  const idle = settings[`${plan}_idle_timeout_seconds`];
  const pausedDays = settings[`${plan}_max_paused_days`];
  return { idleTimeout: idle > 0 ? idle : null, maxPaused: pausedDays > 0 ? pausedDays * 86_400 : null };
}

/** An account's plan, read from its row (an account not found is treated as Free). */
export async function planOfAccount(db: Db, accountId: string): Promise<Plan> {
  const row = await db.selectFrom("accounts").select("plan").where("id", "=", accountId).executeTakeFirst();
  return planOf(row?.plan ?? "free");
}
