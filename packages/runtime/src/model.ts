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
}

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
