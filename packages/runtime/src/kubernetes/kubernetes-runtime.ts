import type { V1OwnerReference, V1Pod } from "@kubernetes/client-node";
import { EGRESS_PORT, Errors, type Logger, type PaddockConfig, PaddockError } from "@paddock/common";
import { ExecdClient } from "../execd/client.js";
import type { PauseDepth } from "../model.js";
import { waitForHttp } from "../readiness.js";
import {
  type RegistryAuth,
  type Runtime,
  RuntimeStartError,
  type SecureRuntime,
  type Workload,
  type WorkloadExit,
  type WorkloadSpec,
  type WorkloadStatus,
  type WorkloadSummary,
} from "../runtime.js";
import { egressUpstreamDns } from "../upstream-dns.js";
import { checkAccess, requiredRules, runtimeClassExists } from "./access-checks.js";
import { type KubeClient, messageOf, openKubeClient, statusOf, unlessNotFound } from "./kube-client.js";
import { isLabelValue, ownSelector, parseSelector, sandboxLabel } from "./labels.js";
import {
  objectNames,
  type PodContext,
  pausedConfigMap,
  pullSecret,
  resumablePod,
  sandboxContainer,
  sandboxNetworkPolicy,
  sandboxPod,
  toClientNetworkPolicy,
  tokenSecret,
} from "./manifests.js";
import {
  containerdId,
  runningAddress,
  schedulingMessage,
  startProblem,
  workloadStatus,
} from "./pod-status.js";
import { PodExitWatch } from "./pod-watch.js";
import { resolveKubernetesSecureRuntime } from "./secure-runtime.js";
import { commitOnNode } from "./snapshot-job.js";

export interface KubernetesRuntimeOptions {
  /** How often a starting pod or a snapshot Job is read again. */
  pollIntervalMs?: number;
  /** First pause before the exit watch reconnects after a failure. */
  watchBackoffMs?: number;
}

/** The most pod log the API server is asked to send; the tail the caller wants is cut from it. */
const logTransferLimit = 64 * 2 ** 20;

/**
 * Sandboxes as pods (decision 0150): one pod per sandbox in `kubernetes.namespace`, its secure
 * runtime a RuntimeClass, execd copied in by an init container, its tokens in a Secret the pod
 * owns, reached at the pod IP. Pause and snapshots commit the container on its node to a registry.
 */
export class KubernetesRuntime implements Runtime {
  readonly kind = "kubernetes" as const;
  private client: KubeClient | undefined;
  private resolvedSecureRuntime: SecureRuntime | undefined;
  private exitWatch: PodExitWatch | undefined;
  private readonly namespace: string;
  private readonly pollIntervalMs: number;

  constructor(
    private readonly config: PaddockConfig,
    private readonly logger: Logger,
    private readonly options: KubernetesRuntimeOptions = {},
  ) {
    this.namespace = config.kubernetes.namespace;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
  }

  get secureRuntime(): SecureRuntime {
    if (!this.resolvedSecureRuntime) throw new Error("KubernetesRuntime.start() has not run");
    return this.resolvedSecureRuntime;
  }

  private get api(): KubeClient {
    if (!this.client) throw new Error("KubernetesRuntime.start() has not run");
    return this.client;
  }

  async start(): Promise<void> {
    const kubernetes = this.config.kubernetes;
    const instance = this.config.server.instance;
    if (!isLabelValue(instance)) {
      throw new RuntimeStartError(
        `server.instance = "${instance}" cannot be a Kubernetes label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit); choose another`,
      );
    }
    if (
      Object.keys(parseSelector(kubernetes.server_pod_selector)).some((key) => key.startsWith("paddock."))
    ) {
      throw new RuntimeStartError(
        `kubernetes.server_pod_selector = "${kubernetes.server_pod_selector}" uses a paddock.* label, which sandbox pods carry too: sandboxes could reach each other; select the server by its own labels`,
      );
    }
    const client = openKubeClient(kubernetes);
    this.client = client;
    await checkAccess(
      client,
      this.namespace,
      requiredRules({ snapshots: Boolean(kubernetes.snapshot_registry) }),
    );
    this.resolvedSecureRuntime = await resolveKubernetesSecureRuntime(this.config.secure_runtime, (name) =>
      runtimeClassExists(client, name),
    );
    await this.ensureNetworkPolicy();
    this.logger.info(
      {
        namespace: this.namespace,
        secureRuntime: this.resolvedSecureRuntime.type || "none",
        runtimeClass: this.resolvedSecureRuntime.engineName || "(cluster default)",
      },
      "kubernetes runtime ready",
    );
  }

  /** One NetworkPolicy per namespace and instance, created or brought up to date at every start. */
  private async ensureNetworkPolicy(): Promise<void> {
    const kubernetes = this.config.kubernetes;
    const policy = sandboxNetworkPolicy({
      namespace: this.namespace,
      instance: this.config.server.instance,
      serverPodSelector: kubernetes.server_pod_selector,
      serverNamespaceSelector: kubernetes.server_namespace_selector,
      serverCidrs: kubernetes.server_cidrs,
      clusterCidrs: kubernetes.cluster_cidrs,
    });
    const body = toClientNetworkPolicy(policy);
    const name = body.metadata?.name ?? "";
    const { networking } = this.api;
    try {
      const existing = await unlessNotFound(
        networking.readNamespacedNetworkPolicy({ name, namespace: this.namespace }),
      );
      if (existing) {
        body.metadata = { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion ?? "" };
        await networking.replaceNamespacedNetworkPolicy({ name, namespace: this.namespace, body });
      } else {
        await networking.createNamespacedNetworkPolicy({ namespace: this.namespace, body });
      }
    } catch (error) {
      // Another server of this instance wrote it at the same moment: the same policy.
      if (statusOf(error) === 409) return;
      if (statusOf(error) === 404) {
        throw new RuntimeStartError(
          `the namespace ${this.namespace} does not exist; create it (deploy/kubernetes/namespaces.yaml) or set kubernetes.namespace`,
        );
      }
      throw new RuntimeStartError(`cannot write the sandbox NetworkPolicy ${name}: ${messageOf(error)}`);
    }
  }

  async close(): Promise<void> {
    this.exitWatch?.stop();
  }

  watchExits(listener: (sandboxId: string, exit: WorkloadExit) => void): void {
    this.exitWatch?.stop();
    this.exitWatch = new PodExitWatch(
      this.api,
      {
        namespace: this.namespace,
        labelSelector: ownSelector(this.config.server.instance, "sandbox"),
        ...(this.options.watchBackoffMs ? { backoffMs: this.options.watchBackoffMs } : {}),
      },
      this.logger,
      listener,
    );
    this.exitWatch.start();
  }

  /** GPUs are the scheduler's business (nvidia.com/gpu); secure runtimes offer none. */
  hasGpu(): boolean {
    return this.secureRuntime.type === "";
  }

  /** The kubelet of whichever node runs the sandbox pulls its image; this server sees no node's cache. */
  async hasImage(_uri: string): Promise<boolean> {
    return true;
  }

  /** Nothing to pull here: credentials travel with the create as a per-sandbox pull Secret. */
  async ensureImage(_uri: string, _auth?: RegistryAuth): Promise<void> {}

  private podContext(): PodContext {
    return {
      namespace: this.namespace,
      instance: this.config.server.instance,
      execdImage: this.config.runtime.execd_image,
      egressImage: this.config.egress.image,
      // Named here, from the server's own resolver (in the cluster: the cluster DNS), never read
      // by the sidecar from the resolv.conf it shares with the sandbox (decision 0002).
      egressUpstreamDns: egressUpstreamDns(this.config.egress.upstream_dns) ?? "",
      runtimeClassName: this.secureRuntime.engineName,
      imagePullSecret: this.config.kubernetes.image_pull_secret,
    };
  }

  async createWorkload(spec: WorkloadSpec, signal?: AbortSignal): Promise<Workload> {
    const { core } = this.api;
    const context = this.podContext();
    const namespace = this.namespace;
    // A read-only hostPath is read-only only in the container's mount flags, which root in a
    // user namespace may remount under gVisor: the node would take its writes (decision 0002).
    const hostReadOnly = spec.volumes.find((volume) => volume.host && volume.readOnly);
    if (hostReadOnly && this.secureRuntime.type === "gvisor") {
      throw new PaddockError(
        Errors.invalidRequest,
        `volume ${hostReadOnly.name}: a read-only host path cannot be enforced by the node under gVisor on Kubernetes; use a read-only persistent volume claim`,
      );
    }
    try {
      signal?.throwIfAborted();
      await core.createNamespacedSecret({ namespace, body: tokenSecret(context, spec) });
      const withPullSecret = Boolean(spec.imageAuth?.username);
      if (spec.imageAuth && withPullSecret) {
        await core.createNamespacedSecret({
          namespace,
          body: pullSecret(context, spec.sandboxId, spec.image, spec.imageAuth),
        });
      }
      const pod = await core.createNamespacedPod({
        namespace,
        body: sandboxPod(context, spec, { pullSecret: withPullSecret }),
      });
      await this.ownSecrets(spec.sandboxId, ownerOf("Pod", pod));
      const address = await this.waitUntilServing(spec.sandboxId, {
        execdToken: spec.execdToken,
        egress: Boolean(spec.networkPolicy),
        signal,
      });
      return { containerId: pod.metadata?.uid ?? spec.sandboxId, address };
    } catch (error) {
      await this.removeWorkload(spec.sandboxId).catch((cleanupError) =>
        this.logger.error(
          { err: cleanupError, sandboxId: spec.sandboxId },
          "cleanup after failed create failed",
        ),
      );
      throw createError(spec.sandboxId, error, signal);
    }
  }

  /**
   * Points the sandbox's Secrets at their owner (its pod, or its paused record), so the garbage
   * collector removes them with it. The pull Secret may not exist.
   */
  private async ownSecrets(sandboxId: string, owner: V1OwnerReference): Promise<void> {
    const names = objectNames(sandboxId);
    const body = [{ op: "add", path: "/metadata/ownerReferences", value: [owner] }];
    await this.api.core.patchNamespacedSecret({ name: names.tokens, namespace: this.namespace, body });
    await unlessNotFound(
      this.api.core.patchNamespacedSecret({ name: names.pull, namespace: this.namespace, body }),
    );
  }

  /**
   * Waits for the pod to run and execd to answer, failing early on what will not heal (an image
   * that cannot be pulled, an exited container) and after `runtime.create_timeout_seconds`.
   */
  private async waitUntilServing(
    sandboxId: string,
    options: { execdToken?: string; egress: boolean; signal?: AbortSignal | undefined },
  ): Promise<string> {
    const { core } = this.api;
    const timeoutSeconds = this.config.runtime.create_timeout_seconds;
    const deadline = Date.now() + timeoutSeconds * 1000;
    const images = { execd: this.config.runtime.execd_image, egress: this.config.egress.image };
    const readPod = () => core.readNamespacedPod({ name: sandboxId, namespace: this.namespace });
    let address: string | undefined;
    for (;;) {
      options.signal?.throwIfAborted();
      const pod = await readPod();
      const problem = startProblem(pod, images);
      if (problem) throw problem;
      address = runningAddress(pod);
      if (address) break;
      if (Date.now() > deadline) {
        const why = pod.spec?.nodeName
          ? `its pod is on node ${pod.spec.nodeName} but its containers did not start`
          : `the cluster did not place its pod${schedulingMessage(pod) ? `: ${schedulingMessage(pod)}` : ""}`;
        throw new PaddockError(
          Errors.runtimeUnavailable,
          `sandbox ${sandboxId} did not start within ${timeoutSeconds} s (runtime.create_timeout_seconds): ${why}`,
        );
      }
      await pause(this.pollIntervalMs, options.signal);
    }
    const stillAlive = async () => {
      const pod = await unlessNotFound(readPod());
      return pod ? startProblem(pod, images)?.message : "the sandbox pod was deleted while starting";
    };
    const remaining = () => Math.max(deadline - Date.now(), 1000);
    const ping = ExecdClient.ping(address, options.execdToken || undefined);
    await waitForHttp(ping.url, {
      ...(options.execdToken ? { headers: ping.headers } : {}),
      // Without the token (a resume) execd answers 401: it is up all the same.
      ...(options.execdToken ? {} : { accept: (status: number) => status === 200 || status === 401 }),
      timeoutMs: remaining(),
      signal: options.signal,
      stillAlive,
    });
    if (options.egress) {
      await waitForHttp(`http://${address}:${EGRESS_PORT}/healthz`, {
        timeoutMs: remaining(),
        signal: options.signal,
        stillAlive,
      });
    }
    return address;
  }

  async removeWorkload(sandboxId: string): Promise<void> {
    const { core } = this.api;
    const names = objectNames(sandboxId);
    const namespace = this.namespace;
    await Promise.all([
      unlessNotFound(core.deleteNamespacedPod({ name: names.pod, namespace })),
      unlessNotFound(core.deleteNamespacedSecret({ name: names.tokens, namespace })),
      unlessNotFound(core.deleteNamespacedSecret({ name: names.pull, namespace })),
      unlessNotFound(core.deleteNamespacedConfigMap({ name: names.paused, namespace })),
    ]);
  }

  /**
   * Kubernetes cannot freeze a pod: pause commits the sandbox's filesystem to the snapshot
   * registry, records the pod in a ConfigMap (which then owns the sandbox's Secrets) and deletes
   * the pod. Processes do not survive; resume starts the entrypoint again on the saved files.
   * Every pause goes to disk this way, whatever was asked.
   */
  async pauseWorkload(sandboxId: string): Promise<PauseDepth> {
    this.requireSnapshots("pause");
    const { core } = this.api;
    const pod = await core.readNamespacedPod({ name: sandboxId, namespace: this.namespace });
    const imageRef = this.snapshotRef(`${sandboxId}-pause-${Date.now().toString(36)}`);
    await this.commit(pod, `${sandboxId}-pause`, imageRef);
    const record = await core.createNamespacedConfigMap({
      namespace: this.namespace,
      body: pausedConfigMap(this.podContext(), resumablePod(pod, imageRef)),
    });
    try {
      await this.ownSecrets(sandboxId, ownerOf("ConfigMap", record));
      await core.deleteNamespacedPod({ name: sandboxId, namespace: this.namespace });
    } catch (error) {
      // Still running: back as it was.
      await this.ownSecrets(sandboxId, ownerOf("Pod", pod)).catch(() => undefined);
      await unlessNotFound(
        core.deleteNamespacedConfigMap({ name: objectNames(sandboxId).paused, namespace: this.namespace }),
      ).catch(() => undefined);
      throw error;
    }
    return { to: "disk", memoryPreserved: false };
  }

  /** Recreates the pod, same name, labels and tokens, from the image its pause saved. */
  async resumeWorkload(sandboxId: string): Promise<void> {
    const { core } = this.api;
    const names = objectNames(sandboxId);
    const record = await unlessNotFound(
      core.readNamespacedConfigMap({ name: names.paused, namespace: this.namespace }),
    );
    if (!record?.data?.pod) throw new Error(`sandbox ${sandboxId} has no paused state to resume from`);
    const body = JSON.parse(record.data.pod) as V1Pod;
    const deadline = Date.now() + this.config.runtime.create_timeout_seconds * 1000;
    let pod: V1Pod;
    for (;;) {
      try {
        pod = await core.createNamespacedPod({ namespace: this.namespace, body });
        break;
      } catch (error) {
        // The paused pod is still terminating under the same name.
        if (statusOf(error) !== 409 || Date.now() > deadline) throw error;
        await pause(this.pollIntervalMs);
      }
    }
    try {
      await this.ownSecrets(sandboxId, ownerOf("Pod", pod));
      const egress = body.spec?.containers.some((container) => container.name !== sandboxContainer) ?? false;
      await this.waitUntilServing(sandboxId, { egress });
    } catch (error) {
      // Stay paused: the record keeps the Secrets, the half-started pod goes.
      await this.ownSecrets(sandboxId, ownerOf("ConfigMap", record)).catch(() => undefined);
      await unlessNotFound(core.deleteNamespacedPod({ name: sandboxId, namespace: this.namespace })).catch(
        () => undefined,
      );
      throw error;
    }
    await unlessNotFound(core.deleteNamespacedConfigMap({ name: names.paused, namespace: this.namespace }));
  }

  async inspectWorkload(sandboxId: string): Promise<WorkloadStatus> {
    const { core } = this.api;
    const names = objectNames(sandboxId);
    const pod = await unlessNotFound(core.readNamespacedPod({ name: names.pod, namespace: this.namespace }));
    if (pod && !pod.metadata?.deletionTimestamp) return workloadStatus(pod);
    const paused = await unlessNotFound(
      core.readNamespacedConfigMap({ name: names.paused, namespace: this.namespace }),
    );
    if (paused) return { state: "paused", containerId: paused.metadata?.uid ?? "" };
    return pod ? workloadStatus(pod) : { state: "missing" };
  }

  async listWorkloads(): Promise<WorkloadSummary[]> {
    const { core } = this.api;
    const instance = this.config.server.instance;
    const [pods, paused] = await Promise.all([
      core.listNamespacedPod({ namespace: this.namespace, labelSelector: ownSelector(instance, "sandbox") }),
      core.listNamespacedConfigMap({
        namespace: this.namespace,
        labelSelector: ownSelector(instance, "paused"),
      }),
    ]);
    const workloads = new Map<string, WorkloadSummary>();
    for (const record of paused.items) {
      const sandboxId = record.metadata?.labels?.[sandboxLabel];
      if (!sandboxId || !record.data?.pod) continue;
      const pod = JSON.parse(record.data.pod) as V1Pod;
      workloads.set(sandboxId, {
        sandboxId,
        containerId: record.metadata?.uid ?? "",
        state: "paused",
        labels: workloadLabels(pod),
      });
    }
    for (const pod of pods.items) {
      const sandboxId = pod.metadata?.labels?.[sandboxLabel];
      if (!sandboxId) continue;
      // A pod that is going away beside a paused record is the pause finishing.
      if (pod.metadata?.deletionTimestamp && workloads.has(sandboxId)) continue;
      workloads.set(sandboxId, {
        sandboxId,
        containerId: pod.metadata?.uid ?? "",
        state: workloadStatus(pod).state,
        labels: workloadLabels(pod),
      });
    }
    return [...workloads.values()];
  }

  async workloadLogs(sandboxId: string, maxBytes: number): Promise<string> {
    const text = String(
      await this.api.core.readNamespacedPodLog({
        name: sandboxId,
        namespace: this.namespace,
        container: sandboxContainer,
        timestamps: true,
        tailLines: 5000,
        // limitBytes keeps the head of what it reads: a bound on the transfer, not the tail we keep.
        limitBytes: logTransferLimit,
      }),
    );
    return text.length > maxBytes ? text.slice(text.length - maxBytes) : text;
  }

  async snapshotWorkload(sandboxId: string, snapshotId: string): Promise<string> {
    this.requireSnapshots("snapshot");
    const pod = await this.api.core.readNamespacedPod({ name: sandboxId, namespace: this.namespace });
    const imageRef = this.snapshotRef(snapshotId);
    await this.commit(pod, snapshotId, imageRef);
    return imageRef;
  }

  /** A registry keeps what was pushed: deleting by tag is not part of the registry API everywhere. */
  async removeSnapshotImage(imageRef: string): Promise<void> {
    this.logger.info(
      { image: imageRef },
      "snapshot image stays in the registry until the registry's retention policy removes it",
    );
  }

  unavailable(operation: "pause" | "snapshot"): PaddockError | undefined {
    const { snapshot_registry, snapshot_image } = this.config.kubernetes;
    if (snapshot_registry && snapshot_image) return undefined;
    return new PaddockError(
      Errors.snapshotRegistryNotConfigured,
      `${operation === "pause" ? "pausing" : "snapshots"} on Kubernetes saves the sandbox's filesystem as an image in a registry (pods cannot be frozen or committed in place); the operator sets kubernetes.snapshot_registry (a registry the nodes push to and pull from) and kubernetes.snapshot_image (an image with nerdctl), see docs/kubernetes.md`,
    );
  }

  private requireSnapshots(operation: "pause" | "snapshot"): void {
    const refused = this.unavailable(operation);
    if (refused) throw refused;
  }

  private snapshotRef(tag: string): string {
    return `${this.config.kubernetes.snapshot_registry.replace(/\/+$/, "")}/paddock-snapshot:${tag}`;
  }

  private async commit(pod: V1Pod, jobName: string, imageRef: string): Promise<void> {
    const sandboxId = pod.metadata?.name ?? "";
    const nodeName = pod.spec?.nodeName;
    const containerId = containerdId(pod);
    if (!nodeName || !containerId) {
      throw new Error(
        `sandbox ${sandboxId} cannot be committed: its container is not running on a containerd node (snapshots need containerd)`,
      );
    }
    const kubernetes = this.config.kubernetes;
    await commitOnNode(
      this.api,
      {
        namespace: this.namespace,
        instance: this.config.server.instance,
        name: jobName,
        sandboxId,
        nodeName,
        containerId,
        imageRef,
        snapshotImage: kubernetes.snapshot_image,
        containerdSocket: kubernetes.containerd_socket,
        pushSecret: kubernetes.image_pull_secret,
        timeoutSeconds: kubernetes.snapshot_timeout_seconds,
      },
      this.logger,
      this.pollIntervalMs,
    );
  }
}

function ownerOf(
  kind: "Pod" | "ConfigMap",
  object: { metadata?: { name?: string; uid?: string } },
): V1OwnerReference {
  return { apiVersion: "v1", kind, name: object.metadata?.name ?? "", uid: object.metadata?.uid ?? "" };
}

/** The workload's labels as given at create: annotations that did not fit label syntax merged back. */
function workloadLabels(pod: V1Pod): Record<string, string> {
  return { ...(pod.metadata?.annotations ?? {}), ...(pod.metadata?.labels ?? {}) };
}

/** Waits `ms`, ending early when `signal` aborts (the caller's loop then throws). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** What a failed create tells its caller, in the terms DockerRuntime uses. */
function createError(sandboxId: string, error: unknown, signal: AbortSignal | undefined): unknown {
  if (error instanceof PaddockError) return error;
  if (signal?.aborted && error === signal.reason) return error;
  const status = statusOf(error);
  const message = messageOf(error);
  // The API server refused the pod itself (an invalid quantity, a volume it rejects): the caller's to fix.
  if (status === 400 || status === 422) {
    return new PaddockError(Errors.invalidRequest, `the cluster refused the sandbox: ${message}`);
  }
  if (status === 403 && /exceeded quota/i.test(message)) {
    return new PaddockError(
      Errors.runtimeUnavailable,
      `the namespace's ResourceQuota is used up: ${message}`,
    );
  }
  return new Error(`sandbox ${sandboxId} failed to start: ${message}`, { cause: error });
}
