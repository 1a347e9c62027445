import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ok } from "./client";
import { sandboxKeys } from "./sandbox-events";
import type { CreateSandboxBody, PauseTarget, Sandbox } from "./types";

/**
 * Every template the account can start from. `fresh` asks again on mount, whatever the cache
 * holds: the account's own templates come and go with its builds.
 */
export function useTemplates({ fresh = false } = {}) {
  return useQuery({
    queryKey: ["templates"],
    queryFn: async () => (await ok(api.GET("/sandboxes/templates"))).items,
    staleTime: 5 * 60_000,
    ...(fresh ? { refetchOnMount: "always" as const } : {}),
  });
}

export function useSandbox(id: string) {
  return useQuery({
    queryKey: sandboxKeys.one(id),
    queryFn: () => ok(api.GET("/sandboxes/{id}", { params: { path: { id } } })) as Promise<Sandbox>,
  });
}

/** POST /sandboxes; the answer is the new sandbox. */
export function createSandbox(body: CreateSandboxBody): Promise<Sandbox> {
  return ok(api.POST("/sandboxes", { body })) as Promise<Sandbox>;
}

/**
 * Pause, resume, renew and kill: the sandbox and the lists are asked again once the call is
 * answered. The answer itself is not cached: a pause or resume answers while the sandbox is still
 * on its way (Pausing, Resuming), and the change stream may already have brought the state it
 * reached, which the older answer would overwrite.
 */
export function useSandboxActions() {
  const queryClient = useQueryClient();
  const settle = (sandbox?: Sandbox) => {
    if (sandbox) void queryClient.invalidateQueries({ queryKey: sandboxKeys.one(sandbox.id) });
    void queryClient.invalidateQueries({ queryKey: sandboxKeys.all });
  };
  const path = (id: string) => ({ params: { path: { id } } });
  return {
    pause: useMutation({
      mutationFn: ({ id, to }: { id: string; to: PauseTarget }) => {
        // `{ to }` is the route's body, typed by hand as the wire's sleep fields are (./types).
        const body = { body: { to } } as object;
        return ok(api.POST("/sandboxes/{id}/pause", { ...path(id), ...body })) as Promise<Sandbox>;
      },
      onSuccess: settle,
    }),
    resume: useMutation({
      mutationFn: (id: string) => ok(api.POST("/sandboxes/{id}/resume", path(id))) as Promise<Sandbox>,
      onSuccess: settle,
    }),
    renew: useMutation({
      mutationFn: ({ id, timeout }: { id: string; timeout: number }) =>
        ok(api.POST("/sandboxes/{id}/renew", { ...path(id), body: { timeout } })) as Promise<Sandbox>,
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
