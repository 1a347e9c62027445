import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ok } from "./client";
import { sandboxKeys } from "./sandbox-events";
import type { Sandbox } from "./types";

export function useTemplates() {
  return useQuery({
    queryKey: ["templates"],
    queryFn: async () => (await ok(api.GET("/sandboxes/templates"))).items,
    staleTime: 5 * 60_000,
  });
}

export function useSandbox(id: string) {
  return useQuery({
    queryKey: sandboxKeys.one(id),
    queryFn: () => ok(api.GET("/sandboxes/{id}", { params: { path: { id } } })),
  });
}

/** Pause, resume, renew and kill: each answer replaces the cached record; lists are asked again. */
export function useSandboxActions() {
  const queryClient = useQueryClient();
  const settle = (sandbox?: Sandbox) => {
    if (sandbox) queryClient.setQueryData(sandboxKeys.one(sandbox.id), sandbox);
    void queryClient.invalidateQueries({ queryKey: sandboxKeys.all });
  };
  const path = (id: string) => ({ params: { path: { id } } });
  return {
    pause: useMutation({
      mutationFn: (id: string) => ok(api.POST("/sandboxes/{id}/pause", path(id))),
      onSuccess: settle,
    }),
    resume: useMutation({
      mutationFn: (id: string) => ok(api.POST("/sandboxes/{id}/resume", path(id))),
      onSuccess: settle,
    }),
    renew: useMutation({
      mutationFn: ({ id, timeout }: { id: string; timeout: number }) =>
        ok(api.POST("/sandboxes/{id}/renew", { ...path(id), body: { timeout } })),
      onSuccess: settle,
    }),
    kill: useMutation({
      mutationFn: async (id: string) => {
        await ok(api.DELETE("/sandboxes/{id}", path(id)));
        return id;
      },
      onSuccess: (id) => {
        queryClient.setQueryData<Sandbox>(sandboxKeys.one(id), (old) =>
          old ? { ...old, state: "Terminated" } : old,
        );
        settle();
      },
    }),
  };
}
