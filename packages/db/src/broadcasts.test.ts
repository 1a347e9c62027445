import { setTimeout as sleep } from "node:timers/promises";
import { createLogger } from "@paddock/common";
import { sql } from "kysely";
import { describe, expect, test } from "vitest";
import { Broadcasts } from "./broadcasts.js";
import type { DatabaseHandle } from "./connect.js";
import { createTestDatabase } from "./testing.js";

const logger = createLogger({ level: "silent" });

async function eventually(check: () => boolean, withinMs: number): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await sleep(20);
  }
}

describe("broadcasts", () => {
  test("reach every replica on PostgreSQL, and a dropped listener reports the gap and comes back", async () => {
    const database = await createTestDatabase("postgres");
    const handles = [await database.open(), await database.open()];
    const heard: string[][] = [[], []];
    const gaps = [0, 0];
    const broadcasts = handles.map((handle) => new Broadcasts(handle, logger));
    try {
      const channels = broadcasts.map((each, i) =>
        each.channel("paddock_test_channel", {
          onMessage: (payload) => heard[i]?.push(payload),
          onGap: () => {
            gaps[i] = (gaps[i] ?? 0) + 1;
          },
        }),
      );
      for (const each of broadcasts) await each.start();
      await channels[0]?.publish("key_1");
      await eventually(() => heard.every((list) => list.includes("key_1")), 2000);

      // The second replica's listening connection is cut by the server.
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where query = 'listen paddock_test_channel' and pid != pg_backend_pid()`.execute(
        (handles[0] as DatabaseHandle).db,
      );
      await eventually(() => (gaps[0] ?? 0) >= 2 && (gaps[1] ?? 0) >= 2, 3000);
      await channels[0]?.publish("key_2");
      await eventually(() => heard.every((list) => list.includes("key_2")), 3000);
    } finally {
      for (const each of broadcasts) await each.close();
      for (const handle of handles) await handle.close();
      await database.drop();
    }
  });

  test("stay in the process on SQLite", async () => {
    const database = await createTestDatabase("sqlite");
    const handle = await database.open();
    try {
      const heard: string[] = [];
      const broadcasts = new Broadcasts(handle, logger);
      const channel = broadcasts.channel("paddock_test_channel", {
        onMessage: (payload) => heard.push(payload),
        onGap: () => undefined,
      });
      await broadcasts.start();
      await channel.publish("key_3");
      expect(heard).toEqual(["key_3"]);
      await broadcasts.close();
    } finally {
      await handle.close();
      await database.drop();
    }
  });
});
