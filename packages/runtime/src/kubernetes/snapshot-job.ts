import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@paddock/common";
import { type KubeClient, messageOf, unlessNotFound } from "./kube-client.js";
import { type SnapshotJobOptions, snapshotJob } from "./manifests.js";

/**
 * Runs the commit-and-push Job on the sandbox's node and waits for it; the Job is deleted
 * whatever the outcome (its pod with it). A failure carries the tail of the Job's output.
 */
export async function commitOnNode(
  client: KubeClient,
  options: SnapshotJobOptions,
  logger: Logger,
  pollMs = 500,
): Promise<void> {
  const { namespace, name } = options;
  await client.batch.createNamespacedJob({ namespace, body: snapshotJob(options) });
  try {
    // The Job's own activeDeadlineSeconds ends it; the margin covers the controller noticing.
    const deadline = Date.now() + (options.timeoutSeconds + 30) * 1000;
    for (;;) {
      const job = await client.batch.readNamespacedJob({ name, namespace });
      if ((job.status?.succeeded ?? 0) > 0) return;
      const failed = job.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True");
      if (failed || (job.status?.failed ?? 0) > 0) {
        const why = failed?.message || failed?.reason || "its pod failed";
        throw new Error(`snapshot Job ${name} failed: ${why}${await jobOutput(client, namespace, name)}`);
      }
      if (Date.now() > deadline) {
        throw new Error(
          `snapshot Job ${name} did not finish within ${options.timeoutSeconds} s (kubernetes.snapshot_timeout_seconds)`,
        );
      }
      await sleep(pollMs);
    }
  } finally {
    await unlessNotFound(
      client.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background" }),
    ).catch((error) => logger.warn({ job: name, err: error }, "deleting the snapshot Job failed"));
  }
}

async function jobOutput(client: KubeClient, namespace: string, job: string): Promise<string> {
  try {
    const pods = await client.core.listNamespacedPod({ namespace, labelSelector: `job-name=${job}` });
    const pod = pods.items[0]?.metadata?.name;
    if (!pod) return "";
    const log = await client.core.readNamespacedPodLog({
      name: pod,
      namespace,
      container: "commit",
      tailLines: 20,
    });
    return log ? `; output: ${String(log).trim()}` : "";
  } catch (error) {
    return `; its output is unavailable (${messageOf(error)})`;
  }
}
