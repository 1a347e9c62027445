import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@paddock/common";
import { sql } from "kysely";
import pg from "pg";
import type { DatabaseHandle } from "./connect.js";

export interface Channel {
  /**
   * Tells every replica (this one included); resolves once the database has the message. Never
   * rejects: a message that cannot be sent is logged, and each use has its own bound without it.
   */
  publish(payload: string): Promise<void>;
}

interface Subscriber {
  onMessage: (payload: string) => void;
  /** Messages may have been missed (the listening connection was down): assume the worst. */
  onGap: () => void;
}

/**
 * Messages between replicas sharing one PostgreSQL, over LISTEN/NOTIFY: how a key revoked
 * through one replica stops working on all of them at once. One connection per replica listens;
 * when it drops, subscribers hear of the gap, and the connection comes back with a backoff.
 * Delivery is best effort, so every use keeps a bound of its own (a cache entry's lifetime).
 *
 * With SQLite (one process) a message goes straight to this process's subscribers.
 */
export class Broadcasts {
  private readonly subscribers = new Map<string, Subscriber[]>();
  private client: pg.Client | undefined;
  private closed = false;
  private connecting: Promise<void> | undefined;

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly logger: Logger,
  ) {}

  channel(name: string, subscriber: Subscriber): Channel {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`channel name ${name} is not a plain identifier`);
    const list = this.subscribers.get(name) ?? [];
    list.push(subscriber);
    this.subscribers.set(name, list);
    // Declared after start: listen now (a reconnect listens on every channel anyway).
    if (list.length === 1 && this.client) {
      this.client
        .query(`listen ${name}`)
        .catch((error: unknown) => this.logger.warn({ err: error, channel: name }, "listen failed"));
    }
    return {
      publish: async (payload) => {
        if (this.handle.engine === "sqlite") {
          this.deliver(name, payload);
          return;
        }
        await sql`select pg_notify(${name}, ${payload})`
          .execute(this.handle.db)
          .catch((error: unknown) => this.logger.warn({ err: error, channel: name }, "broadcast failed"));
      },
    };
  }

  /** Starts listening (on channels declared before and after). */
  async start(): Promise<void> {
    if (this.handle.engine === "sqlite") return;
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.handle.url });
    client.on("notification", (message) => this.deliver(message.channel, message.payload ?? ""));
    client.on("error", (error) => {
      this.logger.warn({ err: error }, "replica broadcast connection failed; reconnecting");
      this.reconnect(client);
    });
    client.on("end", () => this.reconnect(client));
    await client.connect();
    for (const name of this.subscribers.keys()) await client.query(`listen ${name}`);
    this.client = client;
  }

  private reconnect(lost: pg.Client): void {
    if (this.closed || this.client !== lost || this.connecting) return;
    this.client = undefined;
    for (const list of this.subscribers.values()) for (const subscriber of list) subscriber.onGap();
    this.connecting = (async () => {
      for (let delayMs = 100; !this.closed; delayMs = Math.min(delayMs * 2, 5000)) {
        try {
          await this.connect();
          // Whatever was sent while the connection was down is lost: say so once more.
          for (const list of this.subscribers.values()) for (const subscriber of list) subscriber.onGap();
          return;
        } catch (error) {
          this.logger.warn({ err: error }, "replica broadcast reconnect failed");
          await sleep(delayMs);
        }
      }
    })().finally(() => {
      this.connecting = undefined;
    });
  }

  private deliver(name: string, payload: string): void {
    for (const subscriber of this.subscribers.get(name) ?? []) {
      try {
        subscriber.onMessage(payload);
      } catch (error) {
        this.logger.warn({ err: error, channel: name }, "broadcast subscriber failed");
      }
    }
  }
}
