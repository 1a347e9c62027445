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
  /** Volumes at once; their sizes count in `maxDiskBytes`. */
  maxVolumes: number;
  /** Templates it builds and keeps, and builds at once (decision 0198). */
  maxTemplates: number;
  maxTemplateBuilds: number;
}

/** The limits of a plan as the operator configured them. */
export function planLimits(settings: PaddockConfig["plans"], plan: PlanId): PlanLimits {
  const disk = settings[`${plan}_max_disk`];
  return {
    maxSandboxes: settings[`${plan}_max_sandboxes`],
    maxDiskBytes: disk ? (parseMemoryBytes(disk) ?? null) : null,
    maxApiKeys: settings[`${plan}_max_api_keys`],
    maxVolumes: settings[`${plan}_max_volumes`],
    maxTemplates: settings[`${plan}_max_templates`],
    maxTemplateBuilds: settings[`${plan}_max_template_builds`],
  };
}

/**
 * What a plan's sandboxes get when their create leaves it out (decision 0193): the pause after
 * `idleTimeout` seconds without use, and deletion after `maxPaused` seconds paused. Null: never
 * (the operator's 0).
 */
export interface PlanLifecycle {
  idleTimeout: number | null;
  maxPaused: number | null;
}

export function planLifecycle(settings: PaddockConfig["plans"], plan: PlanId): PlanLifecycle {
  const idle = settings[`${plan}_idle_timeout_seconds`];
  const days = settings[`${plan}_max_paused_days`];
  return {
    idleTimeout: idle > 0 ? Math.max(1, Math.round(idle)) : null,
    maxPaused: days > 0 ? Math.max(1, Math.round(days * 86_400)) : null,
  };
}

/** An account's plan, read from its row (an account not found is treated as Free). */
export async function planOfAccount(db: Db, accountId: string): Promise<Plan> {
  const row = await db.selectFrom("accounts").select("plan").where("id", "=", accountId).executeTakeFirst();
  return planOf(row?.plan ?? "free");
}
