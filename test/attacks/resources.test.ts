/**
 * A quick part of the resource attacks (the whole is resources.slow.test.ts): under runc, whose
 * sandboxes start fastest, a fork bomb, a memory bomb, a full disk, processes that ignore SIGTERM
 * and an unread command stream through the `/v1` proxy, each contained while the other account's
 * reads keep their speed, and each sandbox deleted without a trace.
 */

import { afterAll, beforeAll, describe, test } from "vitest";
import { type AttackServer, attack, startAttackServer, table } from "../support/resource-attacks.js";
import { resourceAttacks } from "./resource-attacks.js";

const quick = ["fork bomb (bash)", "memory bomb", "disk fill", "SIGTERM ignored", "flood: /v1 execd SSE"];

describe("resource attacks from inside a sandbox under runc, quickly", () => {
  let server: AttackServer;
  beforeAll(async () => {
    server = await startAttackServer("");
  }, 180_000);
  afterAll(async () => {
    if (server) console.log(`\n${table(server.rows)}`);
    await server?.dispose();
  }, 180_000);

  for (const { title, label, timeoutMs, contain } of resourceAttacks.filter(({ label }) =>
    quick.includes(label),
  ))
    test(
      title,
      async () => {
        await attack(server, label, (id) => contain(server, id));
      },
      timeoutMs,
    );
});
