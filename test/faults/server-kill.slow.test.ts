import { setTimeout as sleep } from "node:timers/promises";
import { Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { stop } from "../support/paddock-process.js";
import { eventually, settles } from "./checks.js";
import { FaultServer } from "./fault-server.js";

// Fault 1 (docs/reliability.md): `paddock serve` (SQLite in its data directory) killed with
// SIGKILL in the middle of a burst of creates, commands, uploads, pauses and snapshots, then
// started again on the same configuration and data.

const upload = "x".repeat(4 * 2 ** 20);

describe("a server killed mid-burst", () => {
  let server: FaultServer;
  const connection = () => server.connection();

  beforeAll(async () => {
    server = await FaultServer.start({
      name: "kill",
      email: "kill@example.com",
      config: [
        // The restarted server must see the killed one's leases lapsed to settle its moves.
        "lease_seconds = 1",
        "[usage]",
        "checkpoint_interval_seconds = 0.5",
        "[plans]",
        "free_max_sandboxes = 30",
        'free_max_disk = "300Gi"',
        "[rate_limits]",
        "creates_per_key = 50",
      ],
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  test("comes back by itself: no record lost or doubled, no orphan, usage once, every sandbox settled", async () => {
    const base = await Promise.all(
      Array.from({ length: 4 }, () =>
        Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900 }),
      ),
    );
    const [forCommands, forUploads, forPause, forSnapshot] = base as [Sandbox, Sandbox, Sandbox, Sandbox];

    // The burst: every kind of call at once, the server killed while they are in flight.
    // Creates a little apart, so some have finished and some not when the server dies.
    const creates = Array.from({ length: 6 }, (_, i) =>
      sleep(i * 400).then(() => Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 900 })),
    );
    const commands = Array.from({ length: 4 }, (_, i) => forCommands.commands.run(`sleep 2; echo done-${i}`));
    const uploads = Array.from({ length: 3 }, (_, i) => forUploads.files.write(`/tmp/upload-${i}`, upload));
    const pause = forPause.pause();
    const snapshot = fetch(`${server.running?.url}/v1/sandboxes/${forSnapshot.id}/snapshots`, {
      method: "POST",
      headers: { "runtime-api-key": server.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ name: "mid-burst" }),
    });
    const calls = [...creates, ...commands, ...uploads, pause, snapshot];
    const settled = Promise.allSettled(calls);
    // Killed once a create of the burst has finished while another is in flight (or, on a
    // machine too loaded for that moment to come, once creates are in flight at all).
    const baseIds = base.map((sandbox) => sandbox.id);
    const moment = async (needFinished: boolean) => {
      const rows = await server.db.db.selectFrom("sandboxes").select(["id", "state"]).execute();
      const finished = rows.some((row) => row.state === "Running" && !baseIds.includes(row.id));
      return rows.some((row) => row.state === "Pending") && (finished || !needFinished);
    };
    await eventually(() => moment(true), 20_000, "a create finished beside one in flight").catch(() =>
      eventually(() => moment(false), 30_000, "creates in flight"),
    );
    await stop(server.running?.child, "SIGKILL");
    const outcomes = await settled;
    const received = (await Promise.allSettled(creates)).flatMap((outcome) =>
      outcome.status === "fulfilled" ? [outcome.value.id] : [],
    );
    const failed = outcomes.filter((outcome) => outcome.status === "rejected").length;
    // The kill interrupted something, or the test proves nothing.
    expect(failed).toBeGreaterThan(0);
    console.log(
      `server kill: ${calls.length} calls in flight, ${failed} cut off, ${received.length}/${creates.length} creates answered`,
    );
    const seen = (await server.db.db.selectFrom("sandboxes").select("id").execute()).map((row) => row.id);

    await server.serveAgain();
    await settles(server.db, server.instance, [...seen, ...received]);

    // No record lost: every sandbox a client heard of is there and works.
    const records = await server.db.db.selectFrom("sandboxes").select(["id", "state"]).execute();
    const ids = records.map((record) => record.id);
    for (const id of [...base.map((sandbox) => sandbox.id), ...received]) expect(ids).toContain(id);
    // None doubled: one record per create at most (the base four and the burst's six).
    expect(records.length).toBeLessThanOrEqual(4 + creates.length);
    // A create that finished as the server died, its answer lost, is its owner's to see and delete.
    const listed = (await Sandbox.list(connection())).items.map((item) => item.id).sort();
    expect(listed).toEqual([...ids].sort());

    for (const record of records.filter((each) => each.state === "Running")) {
      const sandbox = await Sandbox.connect(record.id, connection());
      expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
    }
    // The paused one, paused or not, resumes and works.
    const paused = await Sandbox.connect(forPause.id, connection());
    if (paused.state === "Paused") await paused.resume();
    await eventually(async () => (await paused.refresh()).state === "Running", 60_000, "resumed");
    expect((await paused.commands.run("echo back")).stdout).toBe("back\n");

    // Each upload's file is whole or absent, and no partial file is left beside it.
    const listing = await (await Sandbox.connect(forUploads.id, connection())).commands.run(
      'cd /tmp && for f in upload-*; do [ -e "$f" ] && echo "$f $(wc -c < "$f")"; done; true',
    );
    for (const line of listing.stdout.split("\n").filter(Boolean)) {
      const [name, size] = line.split(" ");
      expect(name).toMatch(/^upload-\d$/);
      expect(Number(size)).toBe(upload.length);
    }

    // The snapshot, if its record was made, is finished or failed, never left capturing.
    const snapshots = await server.db.db.selectFrom("snapshots").select(["id", "state"]).execute();
    for (const each of snapshots) expect(["Ready", "Failed"]).toContain(each.state);

    // Usage runs on after the restart, for live sandboxes only, and the checks above still hold.
    await sleep(1500);
    await settles(server.db, server.instance, [...seen, ...received], 10_000);
    expect((await new Paddock(connection()).usage.get()).usedMinutes).toBeGreaterThan(0);
  }, 600_000);
});
