import type { Logger } from "@paddock/common";
import type { Broadcasts, Channel } from "@paddock/db";

/** A write to one of an account's sandboxes, as the repository reports it. */
export interface SandboxWrite {
  id: string;
  /** The account; null for warm-pool members and runtime-API sandboxes, which nobody watches. */
  owner: string | null;
  /** The record is gone. */
  removed?: boolean;
}

/**
 * What a watcher hears: a sandbox record written (read it again), one removed, or a gap in the
 * news (changes may have been missed: reload everything).
 */
export type SandboxChange =
  | { type: "changed"; id: string }
  | { type: "removed"; id: string }
  | { type: "gap" };

export type ChangeListener = (change: SandboxChange) => void;

const channelName = "paddock_sandbox_changes";

/**
 * Changes to account sandboxes, heard by every replica: each write publishes the sandbox's id
 * and owner over `Broadcasts` (LISTEN/NOTIFY on PostgreSQL, within the process on SQLite), and
 * each replica hands it to the watchers of that owner only. The message carries no state: a
 * watcher reads the record, so what it sends is never older than the database.
 */
export class SandboxChanges {
  private readonly watchers = new Map<string, Set<ChangeListener>>();
  private readonly channel: Channel;

  constructor(
    broadcasts: Broadcasts,
    private readonly logger: Logger,
  ) {
    this.channel = broadcasts.channel(channelName, {
      onMessage: (payload) => this.deliver(payload),
      onGap: () => {
        for (const listeners of this.watchers.values()) this.tell(listeners, { type: "gap" });
      },
    });
  }

  /** Tells every replica of a write; one to a sandbox without an owner is nobody's news. */
  readonly publish = async (write: SandboxWrite): Promise<void> => {
    if (write.owner === null) return;
    await this.channel.publish(
      JSON.stringify({ id: write.id, owner: write.owner, ...(write.removed ? { removed: true } : {}) }),
    );
  };

  /** Hands `listener` the changes to `owner`'s sandboxes until the returned function is called. */
  watch(owner: string, listener: ChangeListener): () => void {
    const listeners = this.watchers.get(owner) ?? new Set();
    listeners.add(listener);
    this.watchers.set(owner, listeners);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.watchers.get(owner) === listeners) this.watchers.delete(owner);
    };
  }

  private deliver(payload: string): void {
    let message: { id?: unknown; owner?: unknown; removed?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      this.logger.warn({ payload }, "unreadable sandbox change message");
      return;
    }
    if (typeof message.id !== "string" || typeof message.owner !== "string") return;
    const change: SandboxChange = { type: message.removed === true ? "removed" : "changed", id: message.id };
    this.tell(this.watchers.get(message.owner) ?? [], change);
  }

  /** One listener's failure is its own: the others still hear. */
  private tell(listeners: Iterable<ChangeListener>, change: SandboxChange): void {
    for (const listener of listeners) {
      try {
        listener(change);
      } catch (error) {
        this.logger.warn({ err: error }, "sandbox change listener failed");
      }
    }
  }
}
