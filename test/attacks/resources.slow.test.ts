/**
 * Every resource attack of resource-attacks.ts, under gVisor and under runc, through a real
 * server with the control plane and two accounts. Prints a table of the figures at the end.
 *
 * Slow: `PADDOCK_TEST_SLOW=1 npx vitest run test/attacks/resources.slow.test.ts`.
 */

import { afterAll, beforeAll, describe, test } from "vitest";
import {
  type AttackServer,
  attack,
  runtimes,
  startAttackServer,
  table,
} from "../support/resource-attacks.js";
import { resourceAttacks } from "./resource-attacks.js";

describe.each(runtimes)("resource attacks from inside a sandbox under $name", ({ type }) => {
  let server: AttackServer;
  beforeAll(async () => {
    server = await startAttackServer(type);
  }, 180_000);
  afterAll(async () => {
    if (server) console.log(`\n${table(server.rows)}`);
    await server?.dispose();
  }, 180_000);

  for (const { title, label, timeoutMs, deleteBoundMs, contain } of resourceAttacks)
    test(
      title,
      async () => {
        await attack(server, label, (id) => contain(server, id), deleteBoundMs);
      },
      timeoutMs,
    );
});
