import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestDatabase, type DatabaseHandle } from "@paddock/db";
import { testDocker } from "@paddock/runtime/testing";
import { AuthenticationError, NotFoundError, Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { removeContainersOf } from "../faults/checks.js";
import { callFrom } from "../support/from-address.js";
import { type PaddockProcess, serve, stop, writeServerConfig } from "../support/paddock-process.js";

// Three `paddock serve` processes with one configuration, one PostgreSQL and one Docker engine,
// driven through the TypeScript SDK as users drive them. One is killed with SIGKILL in the middle
// of a burst of creates; the others must carry on as if nothing happened.

const leaseSeconds = 2;
const poolSize = 2;
const password = "correct horse battery";

async function eventually<T>(check: () => Promise<T | undefined | false>, withinMs: number, what: string) {
  const start = Date.now();
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() - start > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(100);
  }
}

describe("three replicas on one PostgreSQL", () => {
  let instance = "";
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: DatabaseHandle;
  let dir: string;
  const replicas: PaddockProcess[] = [];
  let token = "";
  const connection = (replica: number) => ({ baseUrl: replicas[replica]?.url ?? "", apiKey: token });

  /** Ready warm sandboxes now, and the most ever seen, sampled throughout. */
  let poolNow = 0;
  let poolPeak = 0;
  let sampling: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    db = await database.open();
    dir = mkdtempSync(join(tmpdir(), "paddock-replicas-"));
    const config = writeServerConfig(dir, database.url, [
      `lease_seconds = ${leaseSeconds}`,
      "[pools]",
      `sizes = { python = ${poolSize} }`,
      "[usage]",
      "checkpoint_interval_seconds = 0.5",
      // The burst below holds ten sandboxes of one account, made within a second with one
      // session: more than the Free plan's 5 at once (and their 50Gi of disk), and at its 10
      // creates per key per 10 s.
      "[plans]",
      "free_max_sandboxes = 20",
      'free_max_disk = "200Gi"',
      "[rate_limits]",
      "creates_per_key = 30",
    ]);
    instance = config.instance;
    // One after another: the first takes every lease, so killing it later tests the handover.
    for (let i = 0; i < 3; i++) replicas.push(await serve(config.file));
    sampling = setInterval(() => {
      void db.db
        .selectFrom("sandboxes")
        .select((eb) => eb.fn.countAll<string>().as("count"))
        .where("pooled_for", "=", "python")
        .where("state", "=", "Running")
        .executeTakeFirst()
        .then(
          (row) => {
            poolNow = Number(row?.count ?? 0);
            poolPeak = Math.max(poolPeak, poolNow);
          },
          () => undefined,
        );
    }, 50);
    await Paddock.signup("replicas@example.com", password, { baseUrl: replicas[1]?.url ?? "" });
    token = (await Paddock.login("replicas@example.com", password, { baseUrl: replicas[2]?.url ?? "" }))
      .session.token;
  }, 180_000);

  afterAll(async () => {
    clearInterval(sampling);
    const alive = replicas.find(
      (replica) => replica.child.exitCode === null && replica.child.signalCode === null,
    );
    if (alive && token) {
      const { items } = await Sandbox.list({ baseUrl: alive.url, apiKey: token }).catch(() => ({
        items: [],
      }));
      await Promise.allSettled(
        items.map((item) => Sandbox.kill(item.id, { baseUrl: alive.url, apiKey: token })),
      );
    }
    for (const replica of replicas) await stop(replica.child, "SIGTERM");
    await removeContainersOf(instance);
    await db?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  test("a sandbox made through one replica is served by the others, and a stream outlives changes made elsewhere", async () => {
    const created = await Sandbox.create({ ...connection(0), template: "python", timeoutSeconds: 600 });
    expect((await Sandbox.list(connection(1))).items.map((item) => item.id)).toContain(created.id);

    const onTwo = await Sandbox.connect(created.id, connection(2));
    expect((await onTwo.commands.run("echo from-two")).stdout).toBe("from-two\n");

    // A command streaming through replica 0 while replica 1 changes the sandbox's metadata.
    const lines: string[] = [];
    const streaming = created.commands.run("for i in 1 2 3 4 5 6; do echo line-$i; sleep 0.3; done", {
      onStdout: (text) => lines.push(text),
    });
    const onOne = await Sandbox.connect(created.id, connection(1));
    await sleep(500);
    await onOne.setMetadata({ team: "blue" });
    await onOne.setMetadata({ stage: "two" });
    const result = await streaming;
    expect(result.exitCode).toBe(0);
    expect(lines.join("")).toBe([1, 2, 3, 4, 5, 6].map((i) => `line-${i}\n`).join(""));
    expect((await onTwo.refresh()).metadata).toEqual({ team: "blue", stage: "two" });

    // Paused through one replica, resumed through another, used through a third.
    await onOne.pause();
    await eventually(async () => (await onTwo.refresh()).state === "Paused", 15_000, "paused");
    await onTwo.resume();
    await eventually(async () => (await created.refresh()).state === "Running", 15_000, "resumed");
    expect((await created.commands.run("echo back")).stdout).toBe("back\n");

    await onTwo.kill();
    await expect(Sandbox.connect(created.id, connection(0))).rejects.toBeInstanceOf(NotFoundError);
  }, 120_000);

  test("a key revoked through one replica stops working on every replica at once", async () => {
    const owner = new Paddock(connection(0));
    const key = await owner.keys.create({ name: "shared" });
    const withKey = (replica: number) =>
      new Paddock({ baseUrl: replicas[replica]?.url ?? "", apiKey: key.secret });
    // Each replica has now authenticated (and cached) the key.
    for (const replica of [0, 1, 2]) expect((await withKey(replica).me()).email).toBe("replicas@example.com");

    await owner.keys.delete(key.key.id);
    const revokedAt = Date.now();
    for (const replica of [1, 2]) {
      await eventually(
        async () =>
          withKey(replica)
            .me()
            .then(
              () => false,
              (error) => error instanceof AuthenticationError,
            ),
        1000,
        `revocation seen by replica ${replica}`,
      );
    }
    // Broadcast to every replica: well inside the 5 s a cached credential may live without it.
    expect(Date.now() - revokedAt).toBeLessThan(1000);
  }, 60_000);

  test("limits are one budget across replicas: sign-ups per address, API keys per plan", async () => {
    // 30 sign-ups from one address, spread over the three replicas: 20 in all, not 20 each.
    const signups: number[] = [];
    for (let i = 0; i < 30; i++) {
      const answer = await callFrom("127.0.0.40", `${replicas[i % 3]?.url}/auth/signup`, "POST", {
        email: `spread-${i}@example.com`,
        password,
      });
      signups.push(answer.status);
    }
    expect(signups.filter((status) => status === 201)).toHaveLength(20);
    expect(signups.filter((status) => status === 429)).toHaveLength(10);

    // 30 API keys asked for at once through the three replicas: the Free plan's 20, no more.
    const login = await callFrom("127.0.0.40", `${replicas[0]?.url}/auth/login`, "POST", {
      email: "spread-0@example.com",
      password,
    });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        callFrom("127.0.0.40", `${replicas[i % 3]?.url}/keys`, "POST", { name: `k${i}` }, login.body.token),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(20);
    for (const answer of answers.filter((answer) => answer.status !== 201))
      expect([answer.status, answer.body.code]).toEqual([403, "quota_exceeded"]);
  }, 60_000);

  test("a burst of creates survives the SIGKILL of the replica holding the leases", async () => {
    await eventually(async () => poolNow === poolSize, 60_000, "pool filled");
    const expiring = await Sandbox.create({ ...connection(1), template: "python", timeoutSeconds: 6 });

    // Replica 0 started first and holds every lease.
    const holders = await db.db.selectFrom("leases").select(["name", "holder"]).execute();
    const dead = holders.find((lease) => lease.name === "expiry")?.holder;
    for (const lease of holders.filter((each) => !each.name.startsWith("replica:")))
      expect(lease.holder, lease.name).toBe(dead);

    // Nine creates across the three replicas; replica 0 dies mid-burst.
    const burst = Array.from({ length: 9 }, (_, i) =>
      Sandbox.create({ ...connection(i % 3), template: "python", timeoutSeconds: 600 }),
    );
    const settled = Promise.allSettled(burst);
    // Killed once it has creates in flight (its callers' or its pool refills), however slowly
    // the burst reaches it on a loaded machine.
    const pending = () =>
      db.db
        .selectFrom("sandboxes")
        .select("id")
        .where("state", "=", "Pending")
        .where("replica", "=", dead ?? "")
        .execute();
    await eventually(async () => (await pending()).length > 0, 30_000, "creates in flight on replica 0");
    await stop(replicas[0]?.child, "SIGKILL");
    // It left creates unfinished, never to be answered.
    const leftovers = await pending();
    expect(leftovers.length).toBeGreaterThan(0);
    const outcomes = await settled;
    const received = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
    // The survivors' creates all succeed; only calls to the dead replica may fail.
    expect(received.length).toBeGreaterThanOrEqual(6);
    for (const [i, outcome] of outcomes.entries())
      if (i % 3 !== 0) expect(outcome.status, `create ${i} through a live replica`).toBe("fulfilled");

    // Every sandbox a client got an id for works, through either survivor.
    for (const [i, sandbox] of received.entries()) {
      const through = await Sandbox.connect(sandbox.id, connection(1 + (i % 2)));
      expect((await through.commands.run(`echo ok-${i}`)).stdout).toBe(`ok-${i}\n`);
    }

    // The dead replica's unfinished creates are undone once its leases lapse: then every
    // container of this instance has a record, and every record a container.
    await eventually(
      async () => {
        const containers = await testDocker.listContainers({
          all: true,
          filters: { label: [`paddock.instance=${instance}`, "paddock.role=sandbox"] },
        });
        const records = await db.db.selectFrom("sandboxes").select(["id", "state"]).execute();
        const containerIds = containers.map((container) => container.Labels["paddock.sandbox"]).sort();
        const recordIds = records.map((record) => record.id).sort();
        return (
          records.every((record) => record.state === "Running") &&
          leftovers.every((leftover) => !recordIds.includes(leftover.id)) &&
          JSON.stringify(containerIds) === JSON.stringify(recordIds)
        );
      },
      (leaseSeconds + 10) * 1000,
      "containers and records agree",
    );

    // Expiry moved to a survivor with the lease.
    await eventually(
      async () =>
        Sandbox.connect(expiring.id, connection(2)).then(
          () => false,
          (error) => error instanceof NotFoundError,
        ),
      20_000,
      "the expiring sandbox is removed",
    );

    // The pool refilled to its size and never past it.
    await eventually(async () => poolNow === poolSize, 30_000, "pool refilled");
    expect(poolPeak).toBe(poolSize);

    // No running time counted twice: no sandbox has more than it has lived.
    await sleep(1500); // a few checkpoints by the new holder
    const now = Date.now();
    const usage = await db.db.selectFrom("sandbox_usage").selectAll().execute();
    expect(usage.length).toBeGreaterThanOrEqual(received.length);
    for (const row of usage) {
      const lived = now - Date.parse(row.started_at);
      expect(Number(row.running_ms), `usage of ${row.sandbox_id}`).toBeLessThanOrEqual(lived + 50);
    }
    const account = await new Paddock(connection(1)).usage.get();
    const lifetimes = usage.reduce((sum, row) => sum + (now - Date.parse(row.started_at)), 0);
    expect(account.usedMinutes * 60_000).toBeLessThanOrEqual(lifetimes + 1000);
    expect(account.usedMinutes).toBeGreaterThan(0);
  }, 240_000);
});
