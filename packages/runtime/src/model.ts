import type { SandboxQuota } from "./sandbox-quota.js";
import type { SandboxState, SnapshotState } from "./state-machine.js";

/** A sandbox as the runtime keeps it (camelCase, wire-shaped by the API layer). */
export interface Sandbox {
  id: string;
  owner: string | null;
  status: { state: SandboxState; reason?: string; message?: string; lastTransitionAt: string };
  image?: { uri: string };
  snapshotId?: string;
  template?: string;
  entrypoint: string[];
  metadata: Record<string, string>;
  extensions: Record<string, string>;
  resourceLimits: Record<string, string>;
  platform?: { os: string; arch: string };
  networkPolicy?: NetworkPolicy;
  secureAccess: boolean;
  containerId?: string;
  createdAt: string;
  updatedAt: string;
  expiresAt?: string;
  /** Internal: the template whose warm pool holds this sandbox until a create claims it. */
  pooledFor?: string;
  lifecycle: SandboxLifecycle;
  /** The last time anything reached it through this server (decision 0190). */
  lastActivityAt?: string;
  /** When it pauses for want of use unless used before; absent: it never idles out. */
  idleAt?: string;
  /** While Paused (and while Pausing on its way there): where it sleeps. */
  pause?: PauseDepth;
  /** When it is deleted if still Paused (its `maxPaused`). */
  pausedUntil?: string;
}

/** What happens to a sandbox when its timeout passes, when nothing uses it, and on use while paused. */
export interface SandboxLifecycle {
  onTimeout: "kill" | "pause";
  /** Seconds without use after which it pauses; null: never. */
  idleTimeout: number | null;
  /** A command, code execution or terminal execd started and that still runs counts as use. */
  processesKeepAwake: boolean;
  /** A call that needs it running resumes it first. */
  autoResume: boolean;
  /** A pause to disk keeps its processes and memory where the runtime can. */
  keepMemory: boolean;
  /** Seconds it may stay paused before it is deleted; null: kept. */
  maxPaused: number | null;
  /**
   * Its timeout in seconds, which runs while the sandbox does: a resume re-arms it when it was
   * spent (paused at it, or passed while the sandbox slept); null: none.
   */
  timeout: number | null;
}

export const defaultLifecycle: SandboxLifecycle = {
  onTimeout: "kill",
  idleTimeout: null,
  processesKeepAwake: true,
  autoResume: true,
  keepMemory: true,
  maxPaused: null,
  timeout: null,
};

/**
 * Where a paused sandbox sleeps: frozen in place (`memory`), or off the host's memory (`disk`),
 * with its processes and memory to come back (`memoryPreserved`) or its filesystem only.
 */
export type PauseDepth = { to: "memory" } | { to: "disk"; memoryPreserved: boolean };

export interface NetworkRule {
  action: "allow" | "deny";
  target: string;
}

export interface NetworkPolicy {
  defaultAction?: "allow" | "deny";
  egress?: NetworkRule[];
}

export interface HostVolume {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
  host?: { path: string };
  pvc?: {
    claimName: string;
    createIfNotExists?: boolean;
    deleteOnSandboxTermination?: boolean;
    /** Size of a volume made on demand ("1Gi", checked by the API's schema); default `[volumes] default_size`. */
    storage?: unknown;
  };
  ossfs?: Record<string, unknown>;
  /** A volume of the registry, by name, of the sandbox's owner (control plane, E2B). */
  named?: { name: string };
  /** Set by the service once `named` or `pvc` is resolved: the registry volume and its host directory. */
  managed?: { volumeId: string; directory: string };
}

/** A named volume of the registry (decision 0192). */
export interface Volume {
  id: string;
  /** The account that owns it; null for the runtime API's operator. */
  owner: string | null;
  name: string;
  sizeBytes: number;
  createdAt: string;
}

/** A registry volume as a sandbox mounts it. */
export interface VolumeMount {
  volumeId: string;
  name: string;
  mountPath: string;
  readOnly: boolean;
}

/** A validated create request. Exactly one of `image` / `snapshotId`. */
export interface CreateSandboxInput {
  owner?: string | null;
  image?: { uri: string; auth?: { username?: string; password?: string } };
  snapshotId?: string;
  template?: string;
  /** Seconds; null or undefined = never expires. */
  timeout?: number | null;
  /** The lifecycle policy; what it leaves out takes `defaultLifecycle`'s value. */
  lifecycle?: Partial<Omit<SandboxLifecycle, "timeout">>;
  resourceLimits?: Record<string, string>;
  entrypoint?: string[];
  env?: Record<string, string>;
  metadata?: Record<string, string>;
  extensions?: Record<string, string>;
  platform?: { os: string; arch: string };
  networkPolicy?: NetworkPolicy;
  secureAccess?: boolean;
  volumes?: HostVolume[];
  /** Internal: create a warm-pool member for this template instead of a sandbox for a caller. */
  pooledFor?: string;
  /** What `owner` may hold at once (its plan's limits); checked as the sandbox is written or claimed. */
  quota?: SandboxQuota;
}

export interface Snapshot {
  id: string;
  owner: string | null;
  sandboxId: string;
  name?: string;
  status: { state: SnapshotState; reason?: string; message?: string; lastTransitionAt: string };
  imageRef?: string;
  entrypoint: string[];
  createdAt: string;
}

export interface SandboxFilter {
  owner?: string | null;
  states?: string[];
  template?: string;
  metadata?: Record<string, string>;
  page?: number;
  pageSize?: number;
}

export interface SnapshotFilter {
  owner?: string | null;
  sandboxId?: string;
  name?: string;
  states?: string[];
  page?: number;
  pageSize?: number;
}

/** Where a caller reaches a port of a sandbox, and what it must send. */
export interface ResolvedEndpoint {
  endpoint: string;
  headers?: Record<string, string>;
}
