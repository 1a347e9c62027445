import type { paths } from "paddock/schema";

type JsonOf<Answer> = Answer extends { content: { "application/json": infer Body } } ? Body : never;
/** The JSON body of a path's successful answer. */
type Answer<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  responses: infer Responses;
}
  ? JsonOf<Responses[200 & keyof Responses]> | JsonOf<Responses[201 & keyof Responses]>
  : never;

export type Account = Answer<"/auth/me", "get">;
export type Sandbox = Answer<"/sandboxes/{id}", "get">;
/** How a sandbox sleeps and wakes (decision 0190), as the sandbox wire shows it. */
export type SandboxLifecycle = Sandbox["lifecycle"];
export type SandboxList = Answer<"/sandboxes", "get">;
/** What a plan gives a sandbox whose create leaves its idle policy out (GET /usage `plan.lifecycle`). */
export type PlanIdlePolicy = Answer<"/usage", "get">["plan"]["lifecycle"];
type RequestBody<Path extends keyof paths> = paths[Path] extends {
  post: { requestBody?: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;
export type CreateSandboxBody = RequestBody<"/sandboxes">;
export type PauseTarget = "memory" | "disk";
export type Template = Answer<"/sandboxes/templates", "get">["items"][number];
export type ApiKey = Answer<"/keys", "get">["items"][number];
export type ApiKeyWithSecret = Answer<"/keys", "post">;
export type Secret = Answer<"/secrets", "get">["items"][number];
export type MemoryEntry = Answer<"/memory", "get">["items"][number];
export type MemoryHit = Answer<"/memory/search", "get">["items"][number];
export type FileInfo = Answer<"/sandboxes/{id}/files/list", "get">["items"][number];
export type UsageSummary = Answer<"/usage", "get">;
export type SandboxUsage = Answer<"/usage/sandboxes", "get">["items"][number];
export type Plans = Answer<"/billing/plans", "get">;
export type Endpoint = Answer<"/sandboxes/{id}/endpoints/{port}", "get">;

/** One sample of execd's metrics stream (its own field names). */
export interface MetricsSample {
  cpu_count: number;
  cpu_used_pct: number;
  mem_total_mib: number;
  mem_used_mib: number;
  timestamp: number;
}
