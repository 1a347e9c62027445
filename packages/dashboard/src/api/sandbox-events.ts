import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { useSession } from "../session/session";
import type { Sandbox } from "./types";

export const sandboxKeys = {
  all: ["sandboxes"] as const,
  one: (id: string) => ["sandbox", id] as const,
};

/**
 * Keeps every sandbox on screen live: GET /sandboxes/events pushes each change of the account's
 * sandboxes; a changed record replaces its cached copy and lists are asked again (they have the
 * filters and pages). The browser reconnects a dropped stream by itself; whatever happened
 * meanwhile is fetched again on reconnect, as on `resync`.
 */
export function useSandboxEvents(): void {
  const queryClient = useQueryClient();
  const { generation } = useSession();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new session (a log-in after expiry) opens a new stream, since the old one was refused
  useEffect(() => {
    const source = new EventSource("/sandboxes/events");
    const refreshLists = () => void queryClient.invalidateQueries({ queryKey: sandboxKeys.all });
    source.addEventListener("sandbox", (event) => {
      const { sandbox } = JSON.parse(event.data) as { sandbox: Sandbox };
      queryClient.setQueryData(sandboxKeys.one(sandbox.id), sandbox);
      refreshLists();
    });
    source.addEventListener("deleted", (event) => {
      const { id } = JSON.parse(event.data) as { id: string };
      queryClient.setQueryData<Sandbox>(sandboxKeys.one(id), (old) =>
        old ? { ...old, state: "Terminated" } : old,
      );
      refreshLists();
    });
    const refreshAll = () => {
      refreshLists();
      void queryClient.invalidateQueries({ queryKey: ["sandbox"] });
    };
    source.addEventListener("resync", refreshAll);
    source.addEventListener("open", refreshAll);
    return () => source.close();
  }, [queryClient, generation]);
}
