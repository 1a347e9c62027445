import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { DatabaseHandle } from "@paddock/db";
import { testDocker } from "@paddock/runtime/testing";

// What every fault test checks once the fault is over (docs/reliability.md): the engine and the
// database agree, every sandbox rests in a defined state, and no running time is counted twice.

/** States a sandbox may rest in; the others are moves some replica is making. */
const resting = ["Running", "Paused", "Failed"];

/** Polls `check` until it answers truthy, or fails after `withinMs` with its last complaint. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  withinMs: number,
  what: string,
): Promise<T> {
  const start = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() - start > withinMs)
      throw new Error(`${what}: not within ${withinMs} ms${last ? ` (${String(last)})` : ""}`);
    await sleep(200);
  }
}

export async function containersOf(
  instance: string,
): Promise<Array<{ sandbox: string; role: string; state: string }>> {
  const containers = await testDocker.listContainers({
    all: true,
    filters: { label: [`paddock.instance=${instance}`] },
  });
  return containers.map((container) => ({
    sandbox: container.Labels["paddock.sandbox"] ?? "",
    role: container.Labels["paddock.role"] ?? "",
    state: container.State,
  }));
}

export async function removeContainersOf(instance: string): Promise<void> {
  for (const container of await testDocker.listContainers({
    all: true,
    filters: { label: [`paddock.instance=${instance}`] },
  }))
    await testDocker
      .getContainer(container.Id)
      .remove({ force: true })
      .catch(() => undefined);
}

/**
 * The problems with the state after a fault, [] when there are none: a record in a move nobody
 * finishes, a container without a record or a live record without its container, a sandbox's
 * network files outliving it, a meter left on a sandbox that no longer runs, running time above
 * a sandbox's lifetime, daily totals that disagree with the per-sandbox ones.
 */
export async function problemsAfterFault(
  db: DatabaseHandle,
  instance: string,
  everSeen: Iterable<string> = [],
) {
  const problems: string[] = [];
  const records = await db.db.selectFrom("sandboxes").select(["id", "state", "paused_to"]).execute();
  const containers = await containersOf(instance);
  const byId = new Map(records.map((record) => [record.id, record]));
  for (const record of records) {
    if (!resting.includes(record.state)) problems.push(`${record.id} rests in ${record.state}`);
    const container = containers.find((each) => each.sandbox === record.id && each.role === "sandbox");
    const needsContainer =
      record.state === "Running" || (record.state === "Paused" && record.paused_to !== "disk");
    if (needsContainer && container?.state !== (record.state === "Running" ? "running" : "paused"))
      problems.push(`${record.id} is ${record.state} but its container is ${container?.state ?? "missing"}`);
  }
  for (const container of containers)
    if (byId.get(container.sandbox)?.state === "Failed" && container.state === "running")
      problems.push(`${container.role} container of failed ${container.sandbox} still runs`);
  for (const container of containers)
    if (!byId.has(container.sandbox))
      problems.push(`orphan ${container.role} container of ${container.sandbox} (${container.state})`);
  for (const id of new Set([...everSeen, ...byId.keys()]))
    if (!containers.some((each) => each.sandbox === id) && existsSync(`/run/paddock/network-files/${id}`))
      problems.push(`network files of ${id} outlive its container`);

  const meters = await db.db.selectFrom("usage_meters").select("sandbox_id").execute();
  for (const meter of meters)
    if (byId.get(meter.sandbox_id)?.state !== "Running")
      problems.push(
        `a meter runs on ${meter.sandbox_id}, which is ${byId.get(meter.sandbox_id)?.state ?? "gone"}`,
      );
  const now = Date.now();
  const usage = await db.db.selectFrom("sandbox_usage").selectAll().execute();
  for (const row of usage) {
    const lived = now - Date.parse(row.started_at);
    if (Number(row.running_ms) > lived + 100)
      problems.push(`${row.sandbox_id} counted ${row.running_ms} ms in ${lived} ms of life`);
  }
  const days = await db.db.selectFrom("account_usage_days").selectAll().execute();
  const accounts = new Set([...usage.map((row) => row.account_id), ...days.map((row) => row.account_id)]);
  for (const account of accounts) {
    const perSandbox = usage
      .filter((row) => row.account_id === account)
      .reduce((sum, row) => sum + Number(row.running_ms), 0);
    const perDay = days
      .filter((row) => row.account_id === account)
      .reduce((sum, row) => sum + Number(row.running_ms), 0);
    if (perSandbox !== perDay)
      problems.push(`account ${account}: ${perSandbox} ms per sandbox, ${perDay} ms per day`);
  }
  return problems;
}

/** Waits until the state after a fault has no problems (the reconciler settles it), else fails listing them. */
export async function settles(
  db: DatabaseHandle,
  instance: string,
  everSeen: Iterable<string> = [],
  withinMs = 60_000,
) {
  let problems: string[] = [];
  const seen = [...everSeen];
  const start = Date.now();
  for (;;) {
    problems = await problemsAfterFault(db, instance, seen).catch((error) => [String(error)]);
    if (problems.length === 0) return;
    if (Date.now() - start > withinMs) break;
    await sleep(500);
  }
  throw new Error(`not settled within ${withinMs} ms:\n${problems.join("\n")}`);
}
