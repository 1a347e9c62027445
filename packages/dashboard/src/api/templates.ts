import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { paths } from "paddock/schema";
import { useEffect, useState } from "react";
import { useSession } from "../session/session";
import { api, ok } from "./client";
import { fetchReportingUpload, type UploadProgress } from "./upload-progress";

type Answer<Path extends keyof paths, Method extends "get" | "post"> = paths[Path][Method] extends {
  responses: { 200: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;
export type TemplateDetail = Answer<"/templates/{name}", "get">;
export type AccountTemplate = Answer<"/templates", "get">["items"][number];
export type TemplateBuild = TemplateDetail["builds"][number];
export type BuildStatus = TemplateBuild["status"];
export type BuildLogEntry = Answer<"/templates/{name}/builds/{buildId}/logs", "get">["entries"][number];

export const templateKeys = {
  all: ["account-templates"] as const,
  one: (name: string) => ["account-template", name] as const,
  /** GET /sandboxes/templates, which the create form reads: an account template is there once built. */
  startable: ["templates"] as const,
};

export const isActive = (status: BuildStatus) => status === "waiting" || status === "building";

/** How often a template with a build under way is asked again, for its status in lists. */
const activeRefreshMs = 2000;

export function useAccountTemplates() {
  return useQuery({
    queryKey: templateKeys.all,
    queryFn: async () => (await ok(api.GET("/templates"))).items,
  });
}

/** A template with its builds, newest first; asked again while one of them runs. */
export function useAccountTemplate(name: string) {
  return useQuery({
    queryKey: templateKeys.one(name),
    queryFn: (): Promise<TemplateDetail> => ok(api.GET("/templates/{name}", { params: { path: { name } } })),
    refetchInterval: (query) =>
      query.state.data?.builds.some((build) => isActive(build.status)) ? activeRefreshMs : false,
  });
}

/** POST /templates/{name}/builds with a build context (tar.gz), reporting the upload's progress. */
export function startBuild(
  name: string,
  context: Blob,
  options: { description?: string; onProgress: (progress: UploadProgress) => void },
) {
  return ok(
    api.POST("/templates/{name}/builds", {
      params: {
        path: { name },
        query: options.description ? { description: options.description } : {},
      },
      body: context as never,
      bodySerializer: (body: unknown) => body as Blob,
      headers: { "content-type": "application/gzip" },
      fetch: fetchReportingUpload(context, options.onProgress),
    }),
  );
}

/** Cancel a build and delete a template: the lists and the create form's templates follow. */
export function useTemplateActions() {
  const queryClient = useQueryClient();
  const refresh = (name: string) => {
    void queryClient.invalidateQueries({ queryKey: templateKeys.one(name) });
    void queryClient.invalidateQueries({ queryKey: templateKeys.all });
    void queryClient.invalidateQueries({ queryKey: templateKeys.startable });
  };
  return {
    cancel: useMutation({
      mutationFn: ({ name, buildId }: { name: string; buildId: string }) =>
        ok(api.POST("/templates/{name}/builds/{buildId}/cancel", { params: { path: { name, buildId } } })),
      onSuccess: (_build, { name }) => refresh(name),
    }),
    remove: useMutation({
      mutationFn: async (name: string) => {
        await ok(api.DELETE("/templates/{name}", { params: { path: { name } } }));
        return name;
      },
      onSuccess: (name) => {
        queryClient.removeQueries({ queryKey: templateKeys.one(name) });
        refresh(name);
      },
    }),
  };
}

export interface BuildLog {
  entries: BuildLogEntry[];
  /** The build as it ended; undefined while it runs (or the stream has not reached its end). */
  ended?: TemplateBuild;
  /** Why the stream stopped short, in the server's words. */
  failure?: string;
}

/** How often entries that came in are drawn: a busy RUN writes thousands of lines a second. */
const drawIntervalMs = 100;

/**
 * A build's log from its first entry, live while it runs (GET …/logs as server-sent events, with
 * the session cookie), until the `status` event that ends it. The browser reconnects a dropped
 * stream by itself, which starts from the first entry again: entries already shown are skipped.
 */
export function useBuildLog(name: string, buildId: string): BuildLog {
  const queryClient = useQueryClient();
  const { generation } = useSession();
  const [log, setLog] = useState<BuildLog>({ entries: [] });

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new session (a log-in after expiry) opens a new stream, since the old one was refused
  useEffect(() => {
    setLog({ entries: [] });
    let next = 0;
    let pending: BuildLogEntry[] = [];
    const draw = () => {
      if (pending.length === 0) return;
      const arrived = pending;
      pending = [];
      setLog((old) => ({ ...old, entries: [...old.entries, ...arrived] }));
    };
    const timer = setInterval(draw, drawIntervalMs);
    const path = `/templates/${encodeURIComponent(name)}/builds/${encodeURIComponent(buildId)}/logs`;
    const source = new EventSource(path);
    source.addEventListener("log", (event) => {
      const { seq, at, level, message } = JSON.parse(event.data) as BuildLogEntry;
      if (seq < next) return;
      next = seq + 1;
      pending.push({ seq, at, level, message });
    });
    source.addEventListener("status", (event) => {
      source.close();
      const { type: _type, ...ended } = JSON.parse(event.data) as TemplateBuild & { type: string };
      draw();
      setLog((old) => ({ ...old, ended }));
      void queryClient.invalidateQueries({ queryKey: templateKeys.one(name) });
      void queryClient.invalidateQueries({ queryKey: templateKeys.all });
      if (ended.status === "ready") void queryClient.invalidateQueries({ queryKey: templateKeys.startable });
    });
    // The server's own `error` event (the stream failed) carries data; the browser's has none.
    source.addEventListener("error", (event) => {
      if (!(event instanceof MessageEvent)) return;
      source.close();
      draw();
      const failure = (JSON.parse(event.data) as { detail?: string }).detail ?? "the log stream ended";
      setLog((old) => ({ ...old, failure }));
    });
    return () => {
      source.close();
      clearInterval(timer);
    };
  }, [name, buildId, queryClient, generation]);

  return log;
}
