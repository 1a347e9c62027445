import { type Static, Type } from "@sinclair/typebox";

/** One sample of a sandbox's CPU and memory, in execd's own field names (execd-api.yaml `Metrics`). */
export const SandboxMetrics = Type.Object({
  cpu_count: Type.Number({ description: "CPUs the sandbox may use (its quota, else the CPUs it sees)." }),
  cpu_used_pct: Type.Number({ description: "CPU use since the previous sample, 0–100 % of cpu_count." }),
  mem_total_mib: Type.Number({ description: "Memory the sandbox may use, in MiB." }),
  mem_used_mib: Type.Number({ description: "Memory in use, in MiB (page cache excluded)." }),
  timestamp: Type.Integer({ description: "When the sample was taken (Unix milliseconds)." }),
});
export type SandboxMetrics = Static<typeof SandboxMetrics>;
