import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestDatabase, type DatabaseHandle } from "@paddock/db";
import { Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type PaddockProcess,
  serve,
  signedUpSession,
  stop,
  writeServerConfig,
} from "../support/paddock-process.js";
import { eventually, removeContainersOf, settles } from "./checks.js";

// Fault 6 (docs/reliability.md): one of two replicas on one PostgreSQL killed with SIGKILL while
// it serves creates, commands, uploads and a pause; the other takes its sandboxes over once its
// leases lapse (decision 0145). test/replicas/replicas.test.ts covers a burst of creates alone.

const leaseSeconds = 2;
const upload = "z".repeat(4 * 2 ** 20);

describe("one of two replicas killed mid-request", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: DatabaseHandle;
  let dir: string;
  let instance: string;
  const replicas: PaddockProcess[] = [];
  let token = "";
  const through = (replica: number) => ({ baseUrl: replicas[replica]?.url ?? "", apiKey: token });

  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    db = await database.open();
    dir = mkdtempSync(join(tmpdir(), "paddock-fault-replica-"));
    const config = writeServerConfig(dir, database.url, [
      `lease_seconds = ${leaseSeconds}`,
      "[usage]",
      "checkpoint_interval_seconds = 0.5",
      "[plans]",
      "free_max_sandboxes = 30",
      'free_max_disk = "300Gi"',
      "[rate_limits]",
      "creates_per_key = 50",
    ]);
    instance = config.instance;
    // The first holds every lease: killing it tests the handover of all of them.
    for (let i = 0; i < 2; i++) replicas.push(await serve(config.file));
    token = await signedUpSession(replicas[0]?.url ?? "", "replica@example.com", replicas[1]?.url ?? "");
  });

  afterAll(async () => {
    for (const replica of replicas) await stop(replica.child, "SIGTERM");
    await db?.close();
    await database?.drop();
    await removeContainersOf(instance);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the survivor takes over: no record lost or doubled, no orphan, usage once, every sandbox settled", async () => {
    const base = await Promise.all(
      Array.from({ length: 3 }, () =>
        Sandbox.create({ ...through(0), template: "python", timeoutSeconds: 900 }),
      ),
    );
    const [forCommands, forUploads, forPause] = base as [Sandbox, Sandbox, Sandbox];

    // Everything through replica 0, which dies with it all in flight.
    const creates = Array.from({ length: 4 }, () =>
      Sandbox.create({ ...through(0), template: "python", timeoutSeconds: 900 }),
    );
    const commands = Array.from({ length: 3 }, (_, i) => forCommands.commands.run(`sleep 2; echo done-${i}`));
    const uploads = Array.from({ length: 2 }, (_, i) => forUploads.files.write(`/tmp/upload-${i}`, upload));
    const calls = [...creates, ...commands, ...uploads, forPause.pause()];
    const settled = Promise.allSettled(calls);
    await eventually(
      async () =>
        (await db.db.selectFrom("sandboxes").select("id").where("state", "=", "Pending").execute()).length >
        0,
      30_000,
      "creates in flight",
    );
    await sleep(300);
    await stop(replicas[0]?.child, "SIGKILL");
    const outcomes = await settled;
    const failed = outcomes.filter((outcome) => outcome.status === "rejected").length;
    expect(failed).toBeGreaterThan(0);
    const received = (await Promise.allSettled(creates)).flatMap((outcome) =>
      outcome.status === "fulfilled" ? [outcome.value.id] : [],
    );
    console.log(
      `replica kill: ${calls.length} calls in flight, ${failed} cut off, ${received.length}/${creates.length} creates answered`,
    );
    const seen = (await db.db.selectFrom("sandboxes").select("id").execute()).map((row) => row.id);

    // Once the dead replica's leases lapse, the survivor settles what it left.
    await settles(db, instance, [...seen, ...received], 60_000);
    const records = await db.db.selectFrom("sandboxes").select(["id", "state"]).execute();
    const ids = records.map((record) => record.id);
    for (const id of [...base.map((sandbox) => sandbox.id), ...received]) expect(ids).toContain(id);
    expect(records.length).toBeLessThanOrEqual(base.length + creates.length);
    expect((await Sandbox.list(through(1))).items.map((item) => item.id).sort()).toEqual([...ids].sort());

    // Every sandbox works through the survivor; the paused one resumes there.
    for (const record of records.filter((each) => each.state === "Running")) {
      const sandbox = await Sandbox.connect(record.id, through(1));
      expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
    }
    const paused = await Sandbox.connect(forPause.id, through(1));
    if (paused.state === "Paused") await paused.resume();
    await eventually(async () => (await paused.refresh()).state === "Running", 60_000, "resumed");
    const listing = await (await Sandbox.connect(forUploads.id, through(1))).commands.run(
      'cd /tmp && for f in upload-*; do [ -e "$f" ] && echo "$f $(wc -c < "$f")"; done; true',
    );
    for (const line of listing.stdout.split("\n").filter(Boolean))
      expect(line).toMatch(/^upload-\d 4194304$/);

    // The survivor took the meters over: usage runs on, once.
    const usage = async () => (await new Paddock(through(1)).usage.get()).usedMinutes;
    const then = await usage();
    await eventually(async () => (await usage()) > then, 30_000, "metering by the survivor");
    await settles(db, instance, [...seen, ...received], 10_000);
  }, 600_000);
});
