import type { PaddockError, Page } from "@paddock/common";
import type { CreateSandboxInput, Sandbox, SandboxFilter, Snapshot, SnapshotFilter } from "./model.js";
import type { ChangeListener } from "./sandbox-changes.js";

export interface PauseOptions {
  /** `memory` (the default) freezes it in place; `disk` takes it off the host's memory. */
  to?: "memory" | "disk";
  /** For a pause to disk: keep processes and memory where the runtime can (default: its lifecycle's). */
  keepMemory?: boolean;
  /** Why, for its status and log: a caller (`user`), its `timeout`, being `idle`, or a long sleep (`disk`). */
  cause?: "user" | "timeout" | "idle" | "disk";
}

/**
 * What the HTTP surfaces (runtime API, control plane) call. Every method that takes `owner`
 * answers `sandbox_not_found` / `snapshot_not_found` for records of another owner, so one
 * account can never learn of another's sandboxes. `owner` undefined means "any owner" (the
 * runtime API, which is single-tenant and keyed by the operator's key).
 */
export interface SandboxOperations {
  create(input: CreateSandboxInput): Promise<Sandbox>;
  get(id: string, owner?: string | null): Promise<Sandbox>;
  list(filter: SandboxFilter): Promise<Page<Sandbox>>;
  /** Stops and removes the sandbox; resolves when it is gone. */
  delete(id: string, owner?: string | null): Promise<void>;
  /**
   * Moves to Pausing and returns; the sandbox becomes Paused in the background, in memory or
   * (`to: "disk"`) off the host's memory (decision 0190).
   */
  pause(id: string, owner?: string | null, options?: PauseOptions): Promise<Sandbox>;
  /** Moves to Resuming and returns; the sandbox becomes Running in the background. */
  resume(id: string, owner?: string | null): Promise<Sandbox>;
  /** Resolves once the sandbox is Running, resuming it first if it is paused. */
  wake(id: string, owner?: string | null): Promise<Sandbox>;
  /** Every resume, asked or automatic, passes `check` first (a plan's 402); it throws to refuse. */
  checkResumes(check: (sandbox: Sandbox) => Promise<void>): void;
  /**
   * New absolute expiry; must be in the future and, unless `allowEarlier` (E2B's setTimeout may
   * shorten a lifetime), later than the current one.
   */
  renew(
    id: string,
    expiresAt: Date,
    owner?: string | null,
    options?: { allowEarlier?: boolean },
  ): Promise<{ expiresAt: string }>;
  /** RFC 7396 merge patch of metadata: string values set, null deletes. */
  patchMetadata(id: string, patch: Record<string, string | null>, owner?: string | null): Promise<Sandbox>;
  /** Where this server reaches a port of the sandbox (its address on the sandbox network). */
  target(id: string, port: number, owner?: string | null): Promise<{ host: string; port: number }>;
  /**
   * Asked every few seconds while an exchange with the sandbox stays open (a proxied WebSocket
   * or stream): whether the sandbox is still there (not ending or gone); while it runs, the
   * exchange counts as use, so an open stream keeps it from idling out (decision 0190).
   */
  exchangeOpen(id: string): Promise<boolean>;
  /**
   * Asked when the sandbox stops answering: if its container ended on its own (an OOM kill, a
   * crash), the record becomes Failed at once and the error to give the caller is returned.
   */
  exitCause(id: string): Promise<PaddockError | undefined>;
  /** Per-sandbox secrets the runtime derives: execd token, egress token, endpoint access token. */
  tokens(id: string): { execd: string; egress: string; access: string };
  /** Diagnostic text: container output (`logs`) or lifecycle events (`events`). */
  diagnostics(
    id: string,
    kind: "logs" | "events",
    scope: string,
    owner?: string | null,
  ): Promise<{ text: string; truncated: boolean }>;
  /**
   * Hands `listener` every change to `owner`'s sandboxes made through any replica (created,
   * moved, metadata or expiry written, removed) until the returned function is called.
   */
  watch(owner: string, listener: ChangeListener): () => void;
}

export interface SnapshotOperations {
  /** Accepts the snapshot (Creating) and captures it in the background (Ready | Failed). */
  create(sandboxId: string, options: { name?: string }, owner?: string | null): Promise<Snapshot>;
  get(id: string, owner?: string | null): Promise<Snapshot>;
  list(filter: SnapshotFilter): Promise<Page<Snapshot>>;
  delete(id: string, owner?: string | null): Promise<void>;
}
