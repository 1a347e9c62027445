import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createLogger, loadConfig, newId, newSecret, type PaddockConfig } from "@paddock/common";
import { createTestDatabase } from "@paddock/db";
import { type PaddockServer, startServer } from "@paddock/server";
import {
  AuthenticationError,
  InvalidRequestError,
  Paddock,
  PaddockError,
  PermissionError,
  Sandbox,
  UsageLimitError,
} from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

// Usage metering and the Free plan through the SDK against a real server (real sandboxes, both
// engines). The Free plan is shrunk to 6 seconds and the meter and the enforcer tick several times
// a second, so exhaustion takes seconds, not minutes.

const freeMinutes = 0.1;

async function caught(promise: Promise<unknown>): Promise<PaddockError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof PaddockError)) throw new Error(`expected a PaddockError, got ${String(error)}`);
  return error;
}

/** Polls `read` until `done` holds for its value, for at most `timeoutMs`. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`still not there after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

const settled = (sandbox: Sandbox, state: string) =>
  until(
    () => sandbox.refresh(),
    (current) => current.state === state,
  );

describe.each(["sqlite", "postgres"] as const)("usage and the Free plan on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let config: PaddockConfig;
  let server: PaddockServer;
  const logger = createLogger({ level: process.env.PADDOCK_TEST_LOG_LEVEL ?? "error" });
  const start = () => startServer({ config, logger, stack: { reaperIntervalMs: 200 } });
  const connection = (apiKey: string) => ({ baseUrl: server.url, apiKey });

  /** Signs up and logs in; the session token drives both the client and `Sandbox`. */
  const account = async (email: string) => {
    await Paddock.signup(email, "correct horse battery", { baseUrl: server.url });
    const { client, session } = await Paddock.login(email, "correct horse battery", { baseUrl: server.url });
    return { client, token: session.token, email };
  };
  const setPlan = (email: string, plan: string) =>
    server.stack.database.db.updateTable("accounts").set({ plan }).where("email", "=", email).execute();
  const raw = async (path: string, token: string, method = "GET") => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, body: (await response.json()) as { code?: string } };
  };

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    dataDir = mkdtempSync(join(tmpdir(), "paddock-usage-test-"));
    config = loadConfig({
      env: {},
      overrides: {
        server: {
          host: "127.0.0.1",
          port: 0,
          data_dir: dataDir,
          secret_key: newSecret(),
          instance: newId("test"),
          api_key: newSecret("pdk_"),
        },
        database: { url: database.url },
        plans: { free_minutes: freeMinutes },
        usage: { checkpoint_interval_seconds: 0.5, enforce_interval_seconds: 0.25 },
      },
    });
    server = await start();
  });
  afterAll(async () => {
    if (server) {
      await server.stack.pools.stop({ drain: true });
      const { items } = await server.stack.sandboxes.list({ pageSize: 10_000 });
      await Promise.allSettled(items.map((sandbox) => server.stack.sandboxes.delete(sandbox.id)));
      await server.close();
    }
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("usage grows while a sandbox runs and stands still while it is paused", async () => {
    const { client, token } = await account("meter@example.com");
    const fresh = await client.usage.get();
    expect(fresh).toMatchObject({
      plan: { id: "free", name: "Free" },
      usedMinutes: 0,
      includedMinutes: freeMinutes,
      remainingMinutes: freeMinutes,
      limitReached: false,
      runningSandboxes: 0,
      resumes: 0,
    });
    const now = new Date();
    expect(fresh.period.id).toBe(now.toISOString().slice(0, 7));
    expect(Date.parse(fresh.period.start)).toBeLessThanOrEqual(now.getTime());
    expect(Date.parse(fresh.period.end)).toBeGreaterThan(now.getTime());
    expect(new Date(fresh.period.start).getUTCDate()).toBe(1);

    const sandbox = await Sandbox.create({ ...connection(token), template: "python", timeoutSeconds: 600 });
    await sleep(1000);
    const running = await client.usage.get();
    expect(running.runningSandboxes).toBe(1);
    expect(running.usedMinutes).toBeGreaterThan(0);
    expect(running.usedMinutes).toBeLessThan(freeMinutes);
    // Growth between two reads, not against the wall clock: a loaded machine opens meters late.
    await sleep(300);
    expect((await client.usage.get()).usedMinutes).toBeGreaterThan(running.usedMinutes);
    expect(running.remainingMinutes).toBeCloseTo(freeMinutes - running.usedMinutes, 3);

    await sandbox.pause();
    await settled(sandbox, "Paused");
    const paused = await client.usage.get();
    await sleep(1500);
    const later = await client.usage.get();
    expect(later.usedMinutes).toBe(paused.usedMinutes);
    expect(later.runningSandboxes).toBe(0);
    const { items } = await client.usage.sandboxes();
    expect(items).toEqual([
      {
        sandboxId: sandbox.id,
        template: "python",
        state: "Paused",
        minutes: later.usedMinutes,
        running: false,
        startedAt: expect.any(String),
      },
    ]);

    await sandbox.resume();
    await settled(sandbox, "Running");
    await sleep(800);
    const resumed = await client.usage.get();
    expect(resumed.usedMinutes).toBeGreaterThan(later.usedMinutes + 0.7 / 60);
    expect(resumed.runningSandboxes).toBe(1);
    expect(resumed.resumes).toBe(1);

    await sandbox.kill();
    const gone = await client.usage.sandboxes();
    expect(gone.items).toEqual([
      expect.objectContaining({ sandboxId: sandbox.id, state: "Terminated", running: false }),
    ]);
    expect(gone.items[0]?.minutes).toBeGreaterThanOrEqual(resumed.usedMinutes);
  });

  test("a sandbox that expires stops being counted", async () => {
    const { client, token } = await account("expiry@example.com");
    const sandbox = await Sandbox.create({ ...connection(token), template: "python", timeoutSeconds: 2 });
    await until(
      () => client.usage.sandboxes(),
      (list) => list.items[0]?.state === "Terminated",
    );
    const expired = await client.usage.get();
    expect(expired.runningSandboxes).toBe(0);
    expect(expired.usedMinutes).toBeGreaterThan(0);
    expect(expired.usedMinutes).toBeLessThan(3 / 60);
    await sleep(1000);
    const { items } = await client.usage.sandboxes();
    expect(items).toEqual([
      expect.objectContaining({ sandboxId: sandbox.id, running: false, minutes: expired.usedMinutes }),
    ]);
  });

  test("a used-up Free plan pauses the account's sandboxes and refuses creates and resumes; Pro lifts it", async () => {
    const spender = await account("spender@example.com");
    const bystander = await account("bystander@example.com");
    const first = await Sandbox.create({
      ...connection(spender.token),
      template: "python",
      timeoutSeconds: 600,
    });
    const second = await Sandbox.create({
      ...connection(spender.token),
      template: "python",
      timeoutSeconds: 600,
    });
    // Two sandboxes use the 6 seconds in about three; the enforcer pauses both, deleting neither.
    await settled(first, "Paused");
    await settled(second, "Paused");
    const spent = await spender.client.usage.get();
    expect(spent).toMatchObject({ limitReached: true, remainingMinutes: 0, runningSandboxes: 0 });
    expect(spent.usedMinutes).toBeGreaterThanOrEqual(freeMinutes);
    expect(spent.usedMinutes).toBeLessThan(freeMinutes + 0.05);
    expect((await first.refresh()).state).toBe("Paused");

    const refusedCreate = await caught(
      Sandbox.create({ ...connection(spender.token), template: "python", timeoutSeconds: 600 }),
    );
    expect(refusedCreate).toBeInstanceOf(UsageLimitError);
    expect(refusedCreate).toMatchObject({ code: "usage_limit_reached", status: 402 });
    expect((await Sandbox.list(connection(spender.token))).pagination.totalItems).toBe(2);
    const refusedResume = await caught(first.resume());
    expect(refusedResume).toMatchObject({ code: "usage_limit_reached", status: 402 });
    expect((await first.refresh()).state).toBe("Paused");
    expect((await spender.client.usage.get()).usedMinutes).toBe(spent.usedMinutes);

    // Another account is untouched, and the spender cannot even learn of its sandboxes.
    const theirs = await Sandbox.create({
      ...connection(bystander.token),
      template: "python",
      timeoutSeconds: 600,
    });
    expect((await theirs.commands.run("echo still here")).stdout).toBe("still here\n");
    expect(await bystander.client.usage.get()).toMatchObject({ limitReached: false, runningSandboxes: 1 });
    expect(await raw(`/sandboxes/${theirs.id}/resume`, spender.token, "POST")).toEqual({
      status: 404,
      body: expect.objectContaining({ code: "sandbox_not_found" }),
    });
    await theirs.kill();

    await setPlan(spender.email, "pro");
    expect(await spender.client.usage.get()).toMatchObject({
      plan: { id: "pro", name: "Pro" },
      includedMinutes: null,
      remainingMinutes: null,
      limitReached: false,
    });
    await first.resume();
    await settled(first, "Running");
    const third = await Sandbox.create({
      ...connection(spender.token),
      template: "python",
      timeoutSeconds: 600,
    });
    await sleep(1000); // several enforcer sweeps
    expect((await first.refresh()).state).toBe("Running");
    expect((await third.refresh()).state).toBe("Running");
  });

  test("the per-sandbox view pages, lists only the caller's sandboxes and refuses bad parameters", async () => {
    const spender = await account("pages@example.com");
    await setPlan(spender.email, "pro");
    const other = await account("pages-other@example.com");
    const mine = [];
    for (let i = 0; i < 3; i++)
      mine.push(
        await Sandbox.create({ ...connection(spender.token), template: "python", timeoutSeconds: 600 }),
      );
    const first = await spender.client.usage.sandboxes({ pageSize: 2 });
    const second = await spender.client.usage.sandboxes({ page: 2, pageSize: 2 });
    expect(first.pagination).toEqual({
      page: 1,
      pageSize: 2,
      totalItems: 3,
      totalPages: 2,
      hasNextPage: true,
    });
    expect(second.pagination).toEqual({
      page: 2,
      pageSize: 2,
      totalItems: 3,
      totalPages: 2,
      hasNextPage: false,
    });
    // Newest first.
    expect([...first.items, ...second.items].map((item) => item.sandboxId)).toEqual(
      mine.map((sandbox) => sandbox.id).reverse(),
    );
    expect(first.items.every((item) => item.running && item.state === "Running")).toBe(true);

    expect(await other.client.usage.sandboxes()).toMatchObject({ items: [], pagination: { totalItems: 0 } });
    expect(await other.client.usage.get()).toMatchObject({ usedMinutes: 0, runningSandboxes: 0 });

    for (const query of ["page=0", "pageSize=0", "pageSize=201", "page=abc", "page=1.5", "period=2020-01"]) {
      expect(await raw(`/usage/sandboxes?${query}`, spender.token), query).toEqual({
        status: 400,
        body: expect.objectContaining({ code: "invalid_request" }),
      });
    }
    expect(await caught(spender.client.usage.sandboxes({ page: 0 }))).toBeInstanceOf(InvalidRequestError);
    for (const sandbox of mine) await sandbox.kill();
  });

  test("keys scoped to a surface cannot read usage; an unscoped key can", async () => {
    const { client } = await account("scopes@example.com");
    for (const scope of ["sandboxes", "memory", "secrets"] as const) {
      const key = await client.keys.create({ name: scope, scope });
      const scoped = new Paddock(connection(key.secret));
      const refused = await caught(scoped.usage.get());
      expect(refused).toBeInstanceOf(PermissionError);
      expect(refused.code).toBe("scope_forbidden");
      expect(await caught(scoped.usage.sandboxes())).toMatchObject({ code: "scope_forbidden", status: 403 });
    }
    const unscoped = new Paddock(connection((await client.keys.create({ name: "all" })).secret));
    expect((await unscoped.usage.get()).plan.id).toBe("free");
    expect(await caught(new Paddock(connection("")).usage.get())).toBeInstanceOf(AuthenticationError);
  });

  test("usage survives a restart of the server on the same database", async () => {
    const { token, email } = await account("durable@example.com");
    let client = new Paddock(connection(token));
    await setPlan(email, "pro");
    const stopped = await Sandbox.create({ ...connection(token), template: "python", timeoutSeconds: 600 });
    const kept = await Sandbox.create({ ...connection(token), template: "python", timeoutSeconds: 600 });
    await sleep(1000);
    await stopped.pause();
    await settled(stopped, "Paused");
    const before = await client.usage.sandboxes();
    const minutesOf = (list: typeof before, id: string) =>
      list.items.find((item) => item.sandboxId === id)?.minutes;

    await server.close();
    server = await start();
    client = new Paddock(connection(token));

    const after = await client.usage.sandboxes();
    expect(after.pagination.totalItems).toBe(2);
    expect(minutesOf(after, stopped.id)).toBe(minutesOf(before, stopped.id));
    expect(minutesOf(after, kept.id)).toBeGreaterThanOrEqual(minutesOf(before, kept.id) ?? Number.NaN);
    const resumedKept = await Sandbox.connect(kept.id, connection(token));
    expect(resumedKept.state).toBe("Running");
    // The sandbox that kept running is metered by the new process too.
    await sleep(800);
    const later = await client.usage.sandboxes();
    expect(minutesOf(later, kept.id)).toBeGreaterThan((minutesOf(after, kept.id) ?? 0) + 0.6 / 60);
    expect(minutesOf(later, stopped.id)).toBe(minutesOf(before, stopped.id));
    expect((await client.usage.get()).runningSandboxes).toBe(1);
  });
});
