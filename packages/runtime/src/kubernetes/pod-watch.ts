import { type V1Pod, Watch } from "@kubernetes/client-node";
import type { Logger } from "@paddock/common";
import type { WorkloadExit } from "../runtime.js";
import type { KubeClient } from "./kube-client.js";
import { sandboxLabel } from "./labels.js";
import { unaskedExit } from "./pod-status.js";

export interface PodWatchOptions {
  namespace: string;
  labelSelector: string;
  /** First delay before reconnecting after a failure; doubles up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Reports sandbox pods whose container ended without being asked to. A list gives the state and
 * a resourceVersion, a watch follows from there; whenever the watch ends (error, stream end,
 * 410 Gone) it lists again and reports what it missed, after a growing pause on failures.
 * Each pod is reported once.
 */
export class PodExitWatch {
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;
  private readonly reported = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    private readonly options: PodWatchOptions,
    private readonly logger: Logger,
    private readonly listener: (sandboxId: string, exit: WorkloadExit) => void,
  ) {}

  start(): void {
    void this.cycle();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.controller?.abort();
  }

  private async cycle(): Promise<void> {
    if (this.stopped) return;
    let resourceVersion: string | undefined;
    try {
      const list = await this.client.core.listNamespacedPod({
        namespace: this.options.namespace,
        labelSelector: this.options.labelSelector,
      });
      const present = new Set<string>();
      for (const pod of list.items) {
        present.add(pod.metadata?.uid ?? "");
        this.consider(pod);
      }
      // Pods gone while we were not watching need no memory.
      for (const uid of this.reported) if (!present.has(uid)) this.reported.delete(uid);
      resourceVersion = list.metadata?.resourceVersion;
    } catch (error) {
      this.logger.warn({ err: error }, "listing sandbox pods failed; retrying");
      return this.retry(true);
    }
    if (this.stopped) return;
    let expired = false;
    const done = (error: unknown) => {
      this.controller = undefined;
      if (this.stopped) return;
      if (error) this.logger.warn({ err: error }, "sandbox pod watch failed; listing again");
      this.retry(Boolean(error) || expired);
    };
    this.controller = await new Watch(this.client.config)
      .watch(
        `/api/v1/namespaces/${encodeURIComponent(this.options.namespace)}/pods`,
        { labelSelector: this.options.labelSelector, resourceVersion, allowWatchBookmarks: true },
        (type: string, object: unknown) => {
          if (type === "ERROR") {
            // 410 Gone: our resourceVersion is too old; the list that follows catches up.
            expired = true;
            this.controller?.abort();
            return;
          }
          if (type === "ADDED" || type === "MODIFIED") this.consider(object as V1Pod);
          if (type === "DELETED") this.reported.delete((object as V1Pod).metadata?.uid ?? "");
        },
        done,
      )
      .catch((error: unknown) => {
        done(error);
        return undefined;
      });
    if (this.stopped || expired) this.controller?.abort();
  }

  private retry(failed: boolean): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.failures = failed ? this.failures + 1 : 0;
    const base = this.options.backoffMs ?? 250;
    const delay = failed
      ? Math.min(this.options.maxBackoffMs ?? 30_000, base * 2 ** (this.failures - 1))
      : 50;
    this.timer = setTimeout(() => void this.cycle(), delay);
  }

  private consider(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? "";
    const sandboxId = pod.metadata?.labels?.[sandboxLabel];
    if (!sandboxId || this.reported.has(uid)) return;
    const exit = unaskedExit(pod);
    if (!exit) return;
    this.reported.add(uid);
    this.listener(sandboxId, exit);
  }
}
