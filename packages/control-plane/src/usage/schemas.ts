import { Pagination, pageQueryFields } from "@paddock/common";
import { Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;
const Minutes = (description: string) => Type.Number({ minimum: 0, description });

export const UsageSummary = Type.Object({
  period: Type.Object({
    id: Type.String({ description: "The calendar month (UTC), `YYYY-MM`." }),
    start: Type.String({ description: "First instant of the period (RFC 3339, UTC)." }),
    end: Type.String({ description: "First instant after the period (RFC 3339, UTC)." }),
  }),
  plan: Type.Object({
    id: Type.String(),
    name: Type.String(),
    lifecycle: Type.Object(
      {
        idleTimeout: Type.Union([Type.Integer(), Type.Null()], {
          description: "Seconds without use after which a sandbox pauses; null: never.",
        }),
        maxPaused: Type.Union([Type.Integer(), Type.Null()], {
          description: "Seconds a sandbox may stay paused before it is deleted; null: kept.",
        }),
      },
      {
        description:
          "The plan's default idle policy: what a create gets for `lifecycle.idleTimeout` and `lifecycle.maxPaused` when it leaves them out.",
      },
    ),
  }),
  usedMinutes: Minutes("Sandbox minutes used this period: time spent Running, summed over sandboxes."),
  includedMinutes: Type.Union([Minutes("Sandbox minutes the plan includes per period."), Type.Null()], {
    description: "Sandbox minutes the plan includes per period; null when the plan has no limit.",
  }),
  remainingMinutes: Type.Union([Minutes("Included minutes not yet used."), Type.Null()], {
    description: "Included minutes not yet used; null when the plan has no limit.",
  }),
  limitReached: Type.Boolean({
    description:
      "True once the included minutes are used: creates and resumes answer 402 usage_limit_reached.",
  }),
  runningSandboxes: Type.Integer({ description: "Sandboxes whose time is being counted now." }),
  resumes: Type.Integer({
    minimum: 0,
    description:
      "Resumes of the account's sandboxes this period, asked (POST /sandboxes/{id}/resume) or on use; paused time is not counted in usedMinutes.",
  }),
  days: Type.Array(
    Type.Object({
      date: Type.String({ description: "A day of the period (UTC), `YYYY-MM-DD`." }),
      minutes: Minutes("Sandbox minutes used on that day."),
    }),
    {
      description:
        "Every day of the period from its first to today (UTC), days without use included; they add up to usedMinutes.",
    },
  ),
});

export const SandboxUsage = Type.Object({
  sandboxId: Type.String(),
  template: Type.Union([Type.String(), Type.Null()]),
  state: Type.String({ description: "The sandbox's state now; Terminated once it is deleted." }),
  minutes: Minutes("Minutes this sandbox spent Running in the period."),
  running: Type.Boolean({ description: "True while its time is being counted." }),
  startedAt: Type.String({ description: "When the sandbox was first counted in the period." }),
});

export const SandboxUsageQuery = Type.Object(
  {
    ...pageQueryFields,
  },
  strict,
);

export const SandboxUsageList = Type.Object({
  period: Type.String({ description: "The calendar month (UTC), `YYYY-MM`." }),
  items: Type.Array(SandboxUsage),
  pagination: Pagination,
});
