import { setTimeout as sleep } from "node:timers/promises";
import { type DatabaseHandle, openDatabase } from "@paddock/db";
import { Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { eventually, settles } from "./checks.js";
import { FaultServer } from "./fault-server.js";
import { OwnPostgres } from "./own-postgres.js";

// Fault 3 (docs/reliability.md): the server's PostgreSQL restarted, then gone for longer than a
// lease, under running sandboxes. Calls that need it fail quickly with a clear error; the server
// stays up and serves again by itself once the database is back.

const leaseSeconds = 2;

describe("PostgreSQL restarted and unreachable", () => {
  const postgres = new OwnPostgres();
  let server: FaultServer;
  const connection = () => server.connection();
  let db: DatabaseHandle;

  beforeAll(async () => {
    postgres.start();
    server = await FaultServer.start({
      name: "pgdown",
      email: "pg@example.com",
      databaseUrl: postgres.url,
      config: [`lease_seconds = ${leaseSeconds}`, "[usage]", "checkpoint_interval_seconds = 0.5"],
    });
  });

  afterAll(async () => {
    await server?.close();
    await db?.close();
    postgres.remove();
  });

  /** What each call answered while the database was away: status and code, or "hung". */
  async function answersWhileDown(sandbox: Sandbox): Promise<Record<string, string>> {
    const answer = async (call: Promise<unknown>) => {
      const outcome = await Promise.race([
        call.then(
          () => "ok",
          (error: { status?: number; code?: string }) => `${error.status} ${error.code}`,
        ),
        sleep(30_000).then(() => "hung"),
      ]);
      return outcome;
    };
    return {
      create: await answer(Sandbox.create({ ...connection(), template: "python" })),
      get: await answer(sandbox.refresh()),
      command: await answer(sandbox.commands.run("echo hi")),
      list: await answer(Sandbox.list(connection())),
    };
  }

  test("restarted, then away longer than a lease: clear errors meanwhile, then back by itself", async () => {
    const sandbox = await Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900 });

    // A restart, as its operator would: connections cut, the database back a moment later.
    postgres.stop("fast");
    postgres.start();
    await eventually(
      async () => (await sandbox.commands.run("echo after-restart")).exitCode === 0,
      30_000,
      "serving",
    );

    // Away for three leases.
    postgres.stop("fast");
    const whileDown = await answersWhileDown(sandbox);
    console.log(`postgres down: ${JSON.stringify(whileDown)}`);
    for (const [call, outcome] of Object.entries(whileDown))
      expect(outcome, call).toBe("503 database_unavailable");
    await sleep(leaseSeconds * 3000);
    expect(server.running?.child.exitCode, "the server lives on").toBeNull();
    postgres.start();

    // Back by itself: the sandbox that ran all along works, a new one starts.
    await eventually(
      async () => (await sandbox.commands.run("echo back")).stdout === "back\n",
      60_000,
      "serving again",
    );
    expect((await sandbox.refresh()).state).toBe("Running");
    const next = await Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900 });
    expect((await next.commands.run("echo next")).stdout).toBe("next\n");

    db = await openDatabase(postgres.url);
    await settles(db, server.instance, [sandbox.id, next.id]);
    // Metering resumed: the running sandbox's time grows again.
    const used = async () =>
      Number(
        (
          await db.db
            .selectFrom("sandbox_usage")
            .select("running_ms")
            .where("sandbox_id", "=", sandbox.id)
            .executeTakeFirst()
        )?.running_ms ?? 0,
      );
    const then = await used();
    await eventually(async () => (await used()) > then + 500, 30_000, "metering again");
    expect((await Sandbox.list(connection())).items.map((item) => item.id).sort()).toEqual(
      [sandbox.id, next.id].sort(),
    );
  }, 300_000);
});
