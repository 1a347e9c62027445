import { periodOf } from "@paddock/runtime";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callApi } from "../support/user.js";

// Sleep and wake through the control plane (decisions 0190, 0193): the plan's idle policy on
// creates, the lifecycle on the sandbox wire, pauses in memory and to disk, resume on use, and
// resumes in usage. The Free plan idles sandboxes out after 2 s here, so a forgotten one pauses
// within the test; sandboxes that must stay up say `idleTimeout: null`.

const idleSeconds = 2;
const awake = { idleTimeout: null };

async function setup(secureRuntime: "gvisor" | "") {
  const t = await startTestServer({
    config: {
      secure_runtime: { type: secureRuntime },
      // The refusals below are creates too: no rate to wait for.
      rate_limits: { creates_per_key: 0, creates_per_account: 0 },
      plans: {
        free_idle_timeout_seconds: idleSeconds,
        free_max_paused_days: 30,
        pro_idle_timeout_seconds: 0,
      },
    },
  });
  return t;
}

async function stateOf(t: TestServer, token: string, id: string) {
  return (await callApi(t, token, "GET", `/sandboxes/${id}`)).body;
}

/** Polls the sandbox until `done` holds (generous: a loaded machine pauses and resumes slowly). */
async function until(t: TestServer, token: string, id: string, done: (sandbox: any) => boolean) {
  let last: any;
  await expect
    .poll(
      async () => {
        last = await stateOf(t, token, id);
        return done(last);
      },
      { timeout: 60_000, interval: 200 },
    )
    .toBe(true);
  return last;
}

async function create(t: TestServer, token: string, body: Record<string, unknown> = {}) {
  const created = await callApi(t, token, "POST", "/sandboxes", { template: "python", ...body });
  expect(created.status, created.text).toBe(201);
  await until(t, token, created.body.id, (sandbox) => sandbox.state !== "Pending");
  return created.body;
}

/** A sandbox idles out with the plan's default and a command on it resumes it and is served. */
async function idleThenResumeOnUse(t: TestServer, token: string) {
  const sandbox = await create(t, token);
  expect(sandbox.lifecycle.idleTimeout).toBe(idleSeconds);
  const paused = await until(t, token, sandbox.id, (current) => current.state === "Paused");
  expect(paused).toMatchObject({ pausedTo: "memory", memoryPreserved: null, idleAt: null });
  const before = (await callApi(t, token, "GET", "/usage")).body.resumes;

  const run = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/run`, { command: "echo awake" });
  expect(run.status, run.text).toBe(200);
  expect(run.body).toMatchObject({ stdout: "awake\n", exitCode: 0 });
  const running = await stateOf(t, token, sandbox.id);
  expect(running).toMatchObject({ state: "Running", pausedTo: null });
  expect(Date.parse(running.idleAt)).toBeGreaterThan(Date.now() - 1000);
  expect(running.lastActivityAt).toEqual(expect.any(String));
  expect((await callApi(t, token, "GET", "/usage")).body.resumes).toBe(before + 1);
}

describe("the sandbox lifecycle through the control plane (gVisor)", () => {
  let t: TestServer;
  let token: string;

  beforeAll(async () => {
    t = await setup("gvisor");
    token = await t.account("sleeper@example.com");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("a create without lifecycle gets the plan's idle policy; what it sets, null included, is kept", async () => {
    const usage = await callApi(t, token, "GET", "/usage");
    expect(usage.body.plan).toEqual({
      id: "free",
      name: "Free",
      lifecycle: { idleTimeout: idleSeconds, maxPaused: 30 * 86_400 },
    });

    const plain = await create(t, token);
    expect(plain.lifecycle).toEqual({
      onTimeout: "kill",
      idleTimeout: idleSeconds,
      processesKeepAwake: true,
      autoResume: true,
      keepMemory: true,
      maxPaused: 30 * 86_400,
    });
    expect(plain).toMatchObject({ pausedTo: null, memoryPreserved: null, pausedUntil: null });
    expect(Date.parse(plain.idleAt)).toBeLessThanOrEqual(Date.now() + idleSeconds * 1000);

    const chosen = await create(t, token, {
      timeout: 600,
      lifecycle: {
        onTimeout: "pause",
        idleTimeout: null,
        maxPaused: null,
        autoResume: false,
        keepMemory: false,
      },
    });
    expect(chosen.lifecycle).toEqual({
      onTimeout: "pause",
      idleTimeout: null,
      processesKeepAwake: true,
      autoResume: false,
      keepMemory: false,
      maxPaused: null,
    });
    expect(chosen.idleAt).toBeNull();
    const listed = await callApi(t, token, "GET", "/sandboxes");
    expect(listed.body.items.find((item: { id: string }) => item.id === chosen.id)?.lifecycle).toEqual(
      chosen.lifecycle,
    );

    // Pro's idle timeout is configured 0 here: its sandboxes never idle out unless they ask.
    await t.server.stack.database.db
      .updateTable("accounts")
      .set({ plan: "pro" })
      .where("email", "=", "sleeper@example.com")
      .execute();
    expect((await callApi(t, token, "GET", "/usage")).body.plan.lifecycle).toEqual({
      idleTimeout: null,
      maxPaused: 30 * 86_400,
    });
    const pro = await create(t, token, { lifecycle: { processesKeepAwake: false } });
    expect(pro.lifecycle).toMatchObject({
      idleTimeout: null,
      processesKeepAwake: false,
      maxPaused: 30 * 86_400,
    });
    await t.server.stack.database.db
      .updateTable("accounts")
      .set({ plan: "free" })
      .where("email", "=", "sleeper@example.com")
      .execute();
    for (const id of [plain.id, chosen.id, pro.id])
      expect((await callApi(t, token, "DELETE", `/sandboxes/${id}`)).status).toBe(204);
  });

  test("a bad lifecycle or pause body is a 400 invalid_request naming the field", async () => {
    const bad: Array<[unknown, string]> = [
      [{ onTimeout: "sleep" }, "body.lifecycle.onTimeout"],
      [{ idleTimeout: 0 }, "body.lifecycle.idleTimeout"],
      [{ idleTimeout: "15m" }, "body.lifecycle.idleTimeout"],
      [{ idleTimeout: 1.5 }, "body.lifecycle.idleTimeout"],
      [{ maxPaused: -1 }, "body.lifecycle.maxPaused"],
      [{ autoResume: "yes" }, "body.lifecycle.autoResume"],
      [{ sleepy: true }, "sleepy"],
      [{ idleTimeout: 365 * 86_400 }, "body.lifecycle.idleTimeout"],
    ];
    for (const [lifecycle, field] of bad) {
      const answer = await callApi(t, token, "POST", "/sandboxes", { template: "python", lifecycle });
      expect(answer.status, JSON.stringify(lifecycle)).toBe(400);
      expect(answer.body.code).toBe("invalid_request");
      expect(answer.body.detail, JSON.stringify(lifecycle)).toContain(field);
    }
    const sandbox = await create(t, token, { lifecycle: awake });
    for (const body of [{ to: "fridge" }, { to: "disk", now: true }, "[]"]) {
      const answer = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/pause`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code).toBe("invalid_request");
    }
    expect((await stateOf(t, token, sandbox.id)).state).toBe("Running");
    await callApi(t, token, "DELETE", `/sandboxes/${sandbox.id}`);
  });

  test("an idle sandbox pauses with the plan's default; a command on it resumes it and is served", async () => {
    await idleThenResumeOnUse(t, token);
  });

  test("pause to disk, then a command: resumed from disk with its files", async () => {
    const sandbox = await create(t, token, { lifecycle: awake });
    const write = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/run`, {
      command: "echo kept > /root/note",
    });
    expect(write.status, write.text).toBe(200);

    const pausing = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/pause`, { to: "disk" });
    expect(pausing.status, pausing.text).toBe(200);
    expect(pausing.body).toMatchObject({ state: "Pausing", pausedTo: "disk" });
    const paused = await until(t, token, sandbox.id, (current) => current.state === "Paused");
    expect(paused.pausedTo).toBe("disk");
    expect(typeof paused.memoryPreserved).toBe("boolean");

    const read = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/run`, {
      command: "cat /root/note",
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body.stdout).toBe("kept\n");
    expect(await stateOf(t, token, sandbox.id)).toMatchObject({
      state: "Running",
      pausedTo: null,
      memoryPreserved: null,
    });
    await callApi(t, token, "DELETE", `/sandboxes/${sandbox.id}`);
  });

  test("a pause without a body is in memory; a second one where it is answers 409; memory moves to disk", async () => {
    const sandbox = await create(t, token, { lifecycle: awake });
    const pause = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/pause`);
    expect(pause.status, pause.text).toBe(200);
    expect(pause.body.pausedTo).toBe("memory");
    await until(t, token, sandbox.id, (current) => current.state === "Paused");
    const again = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/pause`, { to: "memory" });
    expect(again.status).toBe(409);
    const deeper = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/pause`, { to: "disk" });
    expect(deeper.status, deeper.text).toBe(200);
    const onDisk = await until(t, token, sandbox.id, (current) => current.state === "Paused");
    expect(onDisk.pausedTo).toBe("disk");
    await callApi(t, token, "DELETE", `/sandboxes/${sandbox.id}`);
  });

  test("with autoResume off, a command on a paused sandbox is refused (409) and leaves it paused", async () => {
    const sandbox = await create(t, token, { lifecycle: { ...awake, autoResume: false } });
    expect((await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/pause`)).status).toBe(200);
    await until(t, token, sandbox.id, (current) => current.state === "Paused");
    const run = await callApi(t, token, "POST", `/sandboxes/${sandbox.id}/run`, { command: "echo no" });
    expect(run.status, run.text).toBe(409);
    expect(run.body.code).toBe("invalid_state");
    expect((await stateOf(t, token, sandbox.id)).state).toBe("Paused");
    await callApi(t, token, "DELETE", `/sandboxes/${sandbox.id}`);
  });

  test("another account's sandbox is 404 on pause and resume", async () => {
    const sandbox = await create(t, token, { lifecycle: awake });
    const stranger = await t.account("stranger@example.com");
    for (const [path, body] of [
      ["pause", undefined],
      ["pause", { to: "disk" }],
      ["resume", undefined],
    ] as const) {
      const answer = await callApi(t, stranger, "POST", `/sandboxes/${sandbox.id}/${path}`, body);
      expect(answer.status, `${path} ${answer.text}`).toBe(404);
      expect(answer.body.code).toBe("sandbox_not_found");
    }
    expect((await stateOf(t, token, sandbox.id)).state).toBe("Running");
    await callApi(t, token, "DELETE", `/sandboxes/${sandbox.id}`);
  });

  test("an account out of minutes is refused a resume with 402, asked or on use, and none is counted", async () => {
    const email = "spent@example.com";
    const spent = await t.account(email);
    const sandbox = await create(t, spent, { lifecycle: awake });
    expect((await callApi(t, spent, "POST", `/sandboxes/${sandbox.id}/pause`)).status).toBe(200);
    await until(t, spent, sandbox.id, (current) => current.state === "Paused");
    const resumed = await callApi(t, spent, "POST", `/sandboxes/${sandbox.id}/resume`);
    expect(resumed.status, resumed.text).toBe(200);
    await until(t, spent, sandbox.id, (current) => current.state === "Running");
    expect((await callApi(t, spent, "POST", `/sandboxes/${sandbox.id}/pause`)).status).toBe(200);
    await until(t, spent, sandbox.id, (current) => current.state === "Paused");
    expect((await callApi(t, spent, "GET", "/usage")).body.resumes).toBe(1);

    // The month's minutes used up, as the meter would have written them.
    const db = t.server.stack.database.db;
    const account = await db
      .selectFrom("accounts")
      .select("id")
      .where("email", "=", email)
      .executeTakeFirstOrThrow();
    const now = new Date().toISOString();
    await db
      .insertInto("sandbox_usage")
      .values({
        sandbox_id: "sbx-spent-elsewhere",
        period: periodOf(new Date()).id,
        account_id: account.id,
        template: "python",
        running_ms: 1000 * 60_000,
        started_at: now,
        updated_at: now,
      })
      .execute();

    const asked = await callApi(t, spent, "POST", `/sandboxes/${sandbox.id}/resume`);
    expect(asked.status, asked.text).toBe(402);
    expect(asked.body.code).toBe("usage_limit_reached");
    const onUse = await callApi(t, spent, "POST", `/sandboxes/${sandbox.id}/run`, { command: "echo no" });
    expect(onUse.status, onUse.text).toBe(402);
    expect(onUse.body.code).toBe("usage_limit_reached");
    expect((await stateOf(t, spent, sandbox.id)).state).toBe("Paused");
    const usage = (await callApi(t, spent, "GET", "/usage")).body;
    expect(usage).toMatchObject({ limitReached: true, resumes: 1 });
    await callApi(t, spent, "DELETE", `/sandboxes/${sandbox.id}`);
  });
});

describe("the idle pause and resume on use under runc", () => {
  let t: TestServer;
  let token: string;

  beforeAll(async () => {
    t = await setup("");
    token = await t.account("runc-sleeper@example.com");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("an idle sandbox pauses with the plan's default; a command on it resumes it and is served", async () => {
    await idleThenResumeOnUse(t, token);
  });
});
