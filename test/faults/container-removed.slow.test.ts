import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { testDocker } from "@paddock/runtime/testing";
import { NotFoundError, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { stop } from "../support/paddock-process.js";
import { containersOf, eventually, settles } from "./checks.js";
import { FaultServer } from "./fault-server.js";

// Fault 5 (docs/reliability.md): a sandbox's container removed behind Paddock's back
// (`docker rm -f`), while the server watches and while it is down.

async function removeBehindTheBack(sandboxId: string): Promise<void> {
  const [container] = await testDocker.listContainers({
    all: true,
    filters: { label: [`paddock.sandbox=${sandboxId}`, "paddock.role=sandbox"] },
  });
  if (!container) throw new Error(`no container for ${sandboxId}`);
  await testDocker.getContainer(container.Id).remove({ force: true });
}

describe("a sandbox's container removed behind Paddock's back", () => {
  let server: FaultServer;
  const connection = () => server.connection();
  const policy = {
    defaultAction: "deny" as const,
    egress: [{ action: "allow" as const, target: "allowed.test" }],
  };

  beforeAll(async () => {
    server = await FaultServer.start({
      name: "rm",
      email: "rm@example.com",
      config: ["lease_seconds = 1", "[usage]", "checkpoint_interval_seconds = 0.5"],
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  /** A removed sandbox is Failed with its sidecar, network files and meter gone, then deletes cleanly. */
  async function endsFailedThenGoes(sandbox: Sandbox): Promise<void> {
    await eventually(async () => (await sandbox.refresh()).state === "Failed", 30_000, "Failed");
    await expect(sandbox.commands.run("echo hi")).rejects.toMatchObject({ status: 409 });
    await settles(server.db, server.instance, [sandbox.id], 30_000);
    const usedAfterFailing = (await server.db.db.selectFrom("sandbox_usage").selectAll().execute()).find(
      (row) => row.sandbox_id === sandbox.id,
    )?.running_ms;
    await sleep(1500);
    const usedLater = (await server.db.db.selectFrom("sandbox_usage").selectAll().execute()).find(
      (row) => row.sandbox_id === sandbox.id,
    )?.running_ms;
    expect(Number(usedLater), "no time counted once it is gone").toBe(Number(usedAfterFailing));

    await sandbox.kill();
    await expect(Sandbox.connect(sandbox.id, connection())).rejects.toBeInstanceOf(NotFoundError);
    expect((await containersOf(server.instance)).filter((each) => each.sandbox === sandbox.id)).toEqual([]);
    expect(existsSync(`/run/paddock/network-files/${sandbox.id}`)).toBe(false);
  }

  test("while the server watches: Failed at once, cleaned on delete, and a new one starts", async () => {
    const sandbox = await Sandbox.create({ ...connection(), template: "python", networkPolicy: policy });
    await sleep(1000);
    await removeBehindTheBack(sandbox.id);
    await endsFailedThenGoes(sandbox);

    const next = await Sandbox.create({ ...connection(), template: "python", networkPolicy: policy });
    expect((await next.commands.run("echo new")).stdout).toBe("new\n");
    await next.kill();
    await settles(server.db, server.instance, [sandbox.id, next.id], 30_000);
  }, 240_000);

  test("while the server is down: the restarted server finds it Failed, the others untouched", async () => {
    const gone = await Sandbox.create({ ...connection(), template: "python", networkPolicy: policy });
    const kept = await Sandbox.create({ ...connection(), template: "python" });
    await stop(server.running?.child, "SIGKILL");
    await removeBehindTheBack(gone.id);
    await server.serveAgain();
    const again = await Sandbox.connect(gone.id, connection());
    await endsFailedThenGoes(again);
    const still = await Sandbox.connect(kept.id, connection());
    expect(still.state).toBe("Running");
    expect((await still.commands.run("echo kept")).stdout).toBe("kept\n");
    await still.kill();
    await settles(server.db, server.instance, [gone.id, kept.id], 30_000);
  }, 240_000);
});
