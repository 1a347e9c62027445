import type { PaddockError } from "@paddock/common";
import type { HostVolume, NetworkPolicy, PauseDepth } from "./model.js";

/**
 * The engine under the sandboxes. Implementations name workloads by sandbox id, so a
 * Kubernetes implementation (pods + RuntimeClass) can follow without changing any caller.
 */
export interface Runtime {
  readonly kind: "docker" | "kubernetes";
  /** The secure runtime every sandbox runs under, after validation. */
  readonly secureRuntime: SecureRuntime;

  /** Validates the engine and secure runtime and prepares shared resources. Throws `RuntimeStartError`. */
  start(): Promise<void>;
  close(): Promise<void>;

  /** Makes the image available locally, pulling (with credentials) only when absent. */
  ensureImage(uri: string, auth?: RegistryAuth): Promise<void>;
  /** Creates and starts the workload and resolves once execd answers. Leaves nothing behind on failure. */
  createWorkload(spec: WorkloadSpec, signal?: AbortSignal): Promise<Workload>;
  /** Removes the workload and everything created with it. Idempotent. */
  removeWorkload(sandboxId: string): Promise<void>;
  /**
   * Why this engine, as configured, cannot pause or snapshot sandboxes at all; asked before
   * either is accepted, so the caller hears it at once rather than from a failed background move.
   */
  unavailable(operation: "pause" | "snapshot"): PaddockError | undefined;
  /**
   * Pauses the workload: frozen in place (`memory`), or off the host's memory (`disk`), keeping
   * its processes and memory when `keepMemory` and the engine can. Resolves with where it went:
   * an engine that cannot freeze in place may put it on disk (decision 0190).
   */
  pauseWorkload(
    sandboxId: string,
    options: { to: "memory" | "disk"; keepMemory: boolean },
  ): Promise<PauseDepth>;
  /** Brings a paused workload back from where it sleeps; resolves once its execd answers. */
  resumeWorkload(sandboxId: string, options: { from: PauseDepth; execdToken: string }): Promise<void>;
  inspectWorkload(sandboxId: string): Promise<WorkloadStatus>;
  /** Every workload this runtime manages, for the reconciler. */
  listWorkloads(): Promise<WorkloadSummary[]>;
  /** Recent output of the sandbox's main process. */
  workloadLogs(sandboxId: string, maxBytes: number): Promise<string>;
  /** Captures the workload's filesystem as an image; returns its reference. */
  snapshotWorkload(sandboxId: string, snapshotId: string): Promise<string>;
  removeSnapshotImage(imageRef: string): Promise<void>;
  /** True when the named image exists locally. */
  hasImage(uri: string): Promise<boolean>;
  hasGpu(): boolean;
  /** Calls `listener` whenever a sandbox's main process exits without being asked to. */
  watchExits(listener: (sandboxId: string, exit: WorkloadExit) => void): void;
}

/** Capabilities a sandbox keeps after dropping all, on every engine: enough for package managers and servers. */
export const sandboxCapabilities = [
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "SETGID",
  "SETUID",
  "SETPCAP",
  "NET_BIND_SERVICE",
];

export interface WorkloadExit {
  exitCode?: number;
  oomKilled: boolean;
  /** The container is gone (removed behind the server's back), not merely ended. */
  vanished?: boolean;
}

export type SecureRuntimeType = "" | "gvisor" | "kata" | "firecracker";

export interface SecureRuntime {
  type: SecureRuntimeType;
  /** Engine runtime name (Docker) or RuntimeClass (Kubernetes); empty for the standard runtime. */
  engineName: string;
  /** Whether an egress sidecar's nftables rules reach the sandboxes' sockets (decision 0006). */
  supportsNetworkPolicy: boolean;
}

export interface RegistryAuth {
  username?: string;
  password?: string;
}

export interface WorkloadSpec {
  sandboxId: string;
  image: string;
  imageAuth?: RegistryAuth;
  /** The user's entrypoint; the runtime wraps it so execd starts first. */
  entrypoint: string[];
  env: Record<string, string>;
  /** Labels stored with the workload (the reconciler reads them back). */
  labels: Record<string, string>;
  cpuMillis?: number;
  memoryBytes?: number;
  gpus?: number;
  /** Most bytes the sandbox may write to its own filesystem (its writable layer). */
  diskBytes?: number;
  volumes: HostVolume[];
  networkPolicy?: NetworkPolicy;
  execdToken: string;
  egressToken: string;
}

export interface Workload {
  containerId: string;
  /** Address at which this server reaches the sandbox's ports. */
  address: string;
}

export interface WorkloadStatus {
  state: "running" | "paused" | "exited" | "missing";
  address?: string;
  containerId?: string;
  exitCode?: number;
  /** The engine killed it for going over its memory limit. */
  oomKilled?: boolean;
  /** Ended with a checkpoint of its processes and memory to start from. */
  checkpointed?: boolean;
  error?: string;
}

export interface WorkloadSummary {
  sandboxId: string;
  containerId: string;
  state: WorkloadStatus["state"];
  labels: Record<string, string>;
}

/** Where volumes live on an engine's host: one fixed-size filesystem each (decision 0192). */
export interface VolumeStorage {
  /** Makes the volume's filesystem of `bytes`, empty and mounted. */
  create(volumeId: string, bytes: number): Promise<void>;
  /** Mounts the volume's filesystem again when the host lost its mount (a restart, a reboot). */
  mount(volumeId: string): Promise<void>;
  /** The host directory holding the volume's files; refused unless its filesystem is mounted. */
  directory(volumeId: string): Promise<string>;
  /** Unmounts the volume and deletes its files. */
  remove(volumeId: string): Promise<void>;
}

export class RuntimeStartError extends Error {
  override name = "RuntimeStartError";
}
