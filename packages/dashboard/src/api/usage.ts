import { useQuery } from "@tanstack/react-query";
import { api, ok } from "./client";
import type { UsageSummary } from "./types";

/**
 * GET /usage: this month's minutes and the account's plan, with the idle policy the plan gives a
 * sandbox created without its own. One query, so every page that shows it shares its cache.
 */
export function useUsage(options: { refetchInterval?: number } = {}) {
  return useQuery({
    queryKey: ["usage"],
    queryFn: () => ok(api.GET("/usage")) as Promise<UsageSummary>,
    ...options,
  });
}
