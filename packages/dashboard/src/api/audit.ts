import { useInfiniteQuery } from "@tanstack/react-query";
import type { paths } from "paddock/schema";
import { api, ok } from "./client";

export type AuditPage = paths["/audit"]["get"]["responses"][200]["content"]["application/json"];
export type AuditEvent = AuditPage["items"][number];

/** The account's audit log, newest first, a page at a time; `type` is a type or a prefix ending in `.`. */
export function useAuditLog(type: string | null) {
  return useInfiniteQuery({
    queryKey: ["audit", type],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      ok(
        api.GET("/audit", {
          params: {
            query: { limit: 50, ...(type ? { type } : {}), ...(pageParam ? { cursor: pageParam } : {}) },
          },
        }),
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
}
