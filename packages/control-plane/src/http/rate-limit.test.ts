import { createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { clientOf } from "./client-address.js";
import { RateCounters } from "./rate-limit.js";

describe.each(testEngines)("rate counters on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const handles: DatabaseHandle[] = [];
  let replicas: RateCounters[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    // Two handles stand for two replicas sharing the database (SQLite has one process only).
    for (let i = 0; i < (engine === "postgres" ? 2 : 1); i++) handles.push(await database.open());
    replicas = handles.map((handle) => new RateCounters(handle.db, "secret"));
  });
  afterAll(async () => {
    for (const handle of handles) await handle.close();
    await database?.drop();
  });

  test("concurrent hits through every replica share one budget, and the overflow is told when to retry", async () => {
    const rule = { limit: 10, windowSeconds: 60 };
    const now = Date.parse("2030-01-01T00:00:15Z");
    const waits = await Promise.all(
      Array.from({ length: 25 }, (_, i) => replicas[i % replicas.length]?.hit([{ key: "k", rule }], now)),
    );
    expect(waits.filter((wait) => wait === 0)).toHaveLength(10);
    expect(waits.filter((wait) => wait === 45)).toHaveLength(15);
    // The next window starts over.
    expect(await replicas[0]?.hit([{ key: "k", rule }], now + 45_000)).toBe(0);
  });

  test("one statement counts several keys; a refund takes back a hit; ended windows are pruned", async () => {
    const tight = { limit: 1, windowSeconds: 10 };
    const loose = { limit: 5, windowSeconds: 10 };
    const now = Date.parse("2030-01-01T00:00:01Z");
    const hits = [
      { key: "a", rule: tight },
      { key: "b", rule: loose },
    ];
    expect(await replicas[0]?.hit(hits, now)).toBe(0);
    expect(await replicas[0]?.hit(hits, now)).toBe(9);
    await replicas[0]?.refund(hits, now);
    await replicas[0]?.refund(hits, now);
    expect(await replicas[0]?.hit(hits, now)).toBe(0);
    // A limit of 0 is no limit, and writes nothing.
    expect(await replicas[0]?.hit([{ key: "c", rule: { limit: 0, windowSeconds: 10 } }], now)).toBe(0);
    await replicas[0]?.prune(now + 10_000);
    const left = await handles[0]?.db.selectFrom("rate_windows").selectAll().execute();
    expect(left?.filter((row) => Number(row.window_end) <= now + 10_000)).toEqual([]);
    // Keys are stored hashed: no email or address in the table.
    expect(JSON.stringify(left)).not.toMatch(/"key":"[abc]"/);
  });
});

test("clients are counted by IPv4 address, or by IPv6 /64", () => {
  expect(clientOf("192.0.2.7")).toBe("192.0.2.7");
  expect(clientOf("::ffff:192.0.2.7")).toBe("192.0.2.7");
  expect(clientOf("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
  expect(clientOf("2001:db8:1:2::9")).toBe(clientOf("2001:0DB8:0001:0002:ffff::1"));
  expect(clientOf("2001:db8::1")).toBe("2001:db8:0:0::/64");
  expect(clientOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  expect(clientOf("::1")).toBe("0:0:0:0::/64");
});
