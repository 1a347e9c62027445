import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";
import { Errors, PaddockError } from "@paddock/common";
import type { WorkloadExit, WorkloadStatus } from "../runtime.js";
import { egressContainer, execdInitContainer, sandboxContainer } from "./manifests.js";

/** Waiting reasons after which the kubelet will not get the image without someone changing something. */
const pullFailures = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"]);
/** Waiting reasons after which the container will not start. */
const startFailures = new Set(["CreateContainerError", "RunContainerError", "StartError"]);

function statusOf(pod: V1Pod, name: string): V1ContainerStatus | undefined {
  return [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find(
    (status) => status.name === name,
  );
}

/** How the sandbox container ended, when it has: its exit code and whether it was killed for memory. */
export function sandboxExit(pod: V1Pod): WorkloadExit | undefined {
  const terminated = statusOf(pod, sandboxContainer)?.state?.terminated;
  if (terminated) return { exitCode: terminated.exitCode, oomKilled: terminated.reason === "OOMKilled" };
  const phase = pod.status?.phase;
  // Evicted or otherwise failed before the container reported an end.
  if (phase === "Failed" || phase === "Succeeded") return { oomKilled: false };
  return undefined;
}

/** An exit nobody asked for: a pod being deleted (remove, pause) ends because it was asked to. */
export function unaskedExit(pod: V1Pod): WorkloadExit | undefined {
  return pod.metadata?.deletionTimestamp ? undefined : sandboxExit(pod);
}

/**
 * Pending and Running both count as running: a pending pod is being started and will run or
 * be removed by its create. "Unknown" (its node stopped reporting) is not treated as an exit.
 */
export function workloadStatus(pod: V1Pod): WorkloadStatus {
  const exit = sandboxExit(pod);
  const address = pod.status?.podIP;
  return {
    state: exit || pod.metadata?.deletionTimestamp ? "exited" : "running",
    containerId: pod.metadata?.uid ?? "",
    ...(address ? { address } : {}),
    ...(exit?.exitCode !== undefined ? { exitCode: exit.exitCode } : {}),
    ...(exit?.oomKilled ? { oomKilled: true } : {}),
    ...(pod.status?.reason || pod.status?.message
      ? { error: [pod.status.reason, pod.status.message].filter(Boolean).join(": ") }
      : {}),
  };
}

/** The pod's address once the sandbox container runs in it. */
export function runningAddress(pod: V1Pod): string | undefined {
  if (pod.status?.phase !== "Running" || !statusOf(pod, sandboxContainer)?.state?.running) return undefined;
  return pod.status.podIP || undefined;
}

/** Why the scheduler has not placed the pod, when it says. */
export function schedulingMessage(pod: V1Pod): string | undefined {
  const condition = pod.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
  return condition?.message || condition?.reason || undefined;
}

/** containerd's id of the sandbox container (`containerd://<id>`), for a commit on its node. */
export function containerdId(pod: V1Pod): string | undefined {
  const id = statusOf(pod, sandboxContainer)?.containerID;
  return id?.startsWith("containerd://") ? id.slice("containerd://".length) : undefined;
}

/**
 * The reason a starting pod will never serve, or undefined while it still may: an image that
 * cannot be pulled, a container that cannot be created, an init copy that failed, an early exit.
 */
export function startProblem(pod: V1Pod, images: { execd: string; egress: string }): Error | undefined {
  const sandbox = statusOf(pod, sandboxContainer);
  const waiting = sandbox?.state?.waiting;
  if (waiting?.reason && pullFailures.has(waiting.reason)) {
    const message = `image ${sandbox?.image} cannot be pulled: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ""}`;
    return /unauthorized|authentication required|no basic auth credentials|denied|401|403/i.test(
      waiting.message ?? "",
    )
      ? new PaddockError(Errors.registryAuthFailed, `registry refused credentials: ${message}`)
      : new PaddockError(Errors.imageNotFound, message);
  }
  for (const [name, image, key] of [
    [execdInitContainer, images.execd, "runtime.execd_image"],
    [egressContainer, images.egress, "egress.image"],
  ] as const) {
    const helper = statusOf(pod, name)?.state?.waiting;
    if (helper?.reason && pullFailures.has(helper.reason)) {
      return new Error(
        `the cluster cannot pull ${image} (${helper.reason}${helper.message ? `: ${helper.message}` : ""}); push it to a registry the nodes reach and set ${key}`,
      );
    }
  }
  const copy = statusOf(pod, execdInitContainer)?.state?.terminated;
  if (copy && copy.exitCode !== 0) {
    return new Error(
      `copying execd out of ${images.execd} failed (exit ${copy.exitCode}${copy.message ? `: ${copy.message}` : ""})`,
    );
  }
  if (waiting?.reason && startFailures.has(waiting.reason)) {
    return new Error(
      `the sandbox container cannot start: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ""}`,
    );
  }
  const exit = sandboxExit(pod);
  if (exit) {
    const why = pod.status?.reason
      ? ` (${pod.status.reason}${pod.status.message ? `: ${pod.status.message}` : ""})`
      : "";
    return new Error(
      `sandbox process exited (code ${exit.exitCode ?? "unknown"}) before execd answered${why}`,
    );
  }
  return undefined;
}
