/**
 * One account's limits, from the attacker's side, against a live server (real Docker, gVisor) on
 * its default configuration: sign-ups per address, API keys and sandboxes per plan, command
 * rates per key, login throttling that never locks the owner out, on Paddock's API and through
 * E2B's stock SDK. Clients at different addresses are the loopback addresses 127.0.0.x.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { testDocker } from "@paddock/runtime/testing";
import { RateLimitError, Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";
import { callFrom } from "../support/from-address.js";
import { callApi } from "../support/user.js";

const password = "correct horse battery";

/** Waits for the start of the next fixed window of `seconds` (windows are aligned to the epoch). */
async function nextWindow(seconds: number): Promise<void> {
  await sleep(seconds * 1000 - (Date.now() % (seconds * 1000)) + 50);
}

describe("account limits", () => {
  let server: E2bServer;
  const url = (path: string) => `${server.t.url}${path}`;

  /** Signs up from `address` and logs in from it; returns the session token. */
  const account = async (email: string, address: string) => {
    expect((await callFrom(address, url("/auth/signup"), "POST", { email, password })).status).toBe(201);
    const login = await callFrom(address, url("/auth/login"), "POST", { email, password });
    expect(login.status).toBe(200);
    return login.body.token as string;
  };

  beforeAll(async () => {
    server = await startE2bServer();
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("30 sign-ups from one address: 20 are accepted, then 429 rate_limited with Retry-After; other addresses are unaffected", async () => {
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof callFrom>> | undefined;
    for (let i = 0; i < 30; i++) {
      // A forged X-Forwarded-For changes nothing: no proxy is trusted unless the operator names it.
      const answer = await callFrom(
        "127.0.0.5",
        url("/auth/signup"),
        "POST",
        { email: `farm-${i}@example.com`, password },
        undefined,
        { "x-forwarded-for": `203.0.113.${i}` },
      );
      statuses.push(answer.status);
      if (answer.status !== 201) refused = answer;
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(201));
    expect(statuses.slice(20)).toEqual(Array(10).fill(429));
    expect(refused?.body.code).toBe("rate_limited");
    const wait = Number(refused?.headers["retry-after"]);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(3600);
    // An email already taken counts too (sign-up tells it), so probing emails is as slow.
    const probe = await callFrom("127.0.0.5", url("/auth/signup"), "POST", {
      email: "farm-0@example.com",
      password,
    });
    expect(probe.status).toBe(429);
    expect(
      (await callFrom("127.0.0.6", url("/auth/signup"), "POST", { email: "elsewhere@example.com", password }))
        .status,
    ).toBe(201);
  });

  test("API keys past the plan's limit are refused with 403 quota_exceeded, even when asked for all at once", async () => {
    const session = await account("keys@example.com", "127.0.0.7");
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => callApi(server.t, session, "POST", "/keys", { name: `k${i}` })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(20);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused).toHaveLength(10);
    for (const answer of refused) {
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe("quota_exceeded");
      expect(answer.body.detail).toMatch(/^API key limit: the Free plan allows 20 API keys/);
    }
    const listed = await callApi(server.t, session, "GET", "/keys");
    expect(listed.body.items).toHaveLength(20);
    // Deleting one makes room for one.
    expect((await callApi(server.t, session, "DELETE", `/keys/${listed.body.items[0].id}`)).status).toBe(204);
    expect((await callApi(server.t, session, "POST", "/keys", { name: "again" })).status).toBe(201);
    expect((await callApi(server.t, session, "POST", "/keys", { name: "one too many" })).status).toBe(403);
  });

  test("12 concurrent creates on one Free account: at most 5 sandboxes, the rest 403 quota_exceeded, nothing left behind", async () => {
    const session = await account("creates@example.com", "127.0.0.8");
    // Two keys, so the per-key create rate (10 per 10 s) is not what stops them.
    const keys = await Promise.all(
      ["a", "b"].map(
        async (name) => (await callApi(server.t, session, "POST", "/keys", { name })).body.secret as string,
      ),
    );
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        callApi(server.t, keys[i % 2] as string, "POST", "/sandboxes", { template: "python", timeout: 600 }),
      ),
    );
    const created = answers.filter((answer) => answer.status === 201);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(created.length).toBeLessThanOrEqual(5);
    expect(created.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.status, answer.text).toBe(403);
      expect(answer.body.code).toBe("quota_exceeded");
      expect(answer.body.detail).toMatch(/^sandbox limit: the Free plan allows 5 sandboxes at once/);
    }
    // The account holds exactly what was answered 201, and every container has a record.
    const listed = await callApi(server.t, session, "GET", "/sandboxes?pageSize=100");
    expect(listed.body.items.map((item: { id: string }) => item.id).sort()).toEqual(
      created.map((answer) => answer.body.id).sort(),
    );
    const containers = await testDocker.listContainers({
      all: true,
      filters: { label: [`paddock.instance=${server.t.config.server.instance}`, "paddock.role=sandbox"] },
    });
    const records = await server.t.server.stack.database.db.selectFrom("sandboxes").select("id").execute();
    expect(containers.map((container) => container.Labels["paddock.sandbox"]).sort()).toEqual(
      records.map((record) => record.id).sort(),
    );
    for (const answer of created)
      expect((await callApi(server.t, session, "DELETE", `/sandboxes/${answer.body.id}`)).status).toBe(204);
  }, 240_000);

  test("a burst of commands past the per-key rate is refused with 429 rate_limited and Retry-After", async () => {
    const session = await account("burst@example.com", "127.0.0.9");
    const key = (await callApi(server.t, session, "POST", "/keys", { name: "burst" })).body.secret as string;
    const sandbox = await callApi(server.t, key, "POST", "/sandboxes", { template: "python", timeout: 600 });
    expect(sandbox.status).toBe(201);
    await nextWindow(10);
    const answers = await Promise.all(
      Array.from({ length: 130 }, () =>
        fetch(url(`/sandboxes/${sandbox.body.id}/run`), {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ command: "true" }),
        }),
      ),
    );
    const ran = answers.filter((answer) => answer.status === 200);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(ran.length).toBeLessThanOrEqual(100);
    expect(ran.length + limited.length).toBe(130);
    expect(limited.length).toBeGreaterThanOrEqual(30);
    const wait = Number(limited[0]?.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(10);
    expect(((await (limited[0] as Response).json()) as { code: string }).code).toBe("rate_limited");
    // Once the window has passed, commands run again.
    await sleep(wait * 1000);
    const again = await callApi(server.t, key, "POST", `/sandboxes/${sandbox.body.id}/run`, {
      command: "echo ok",
    });
    expect([again.status, again.body.stdout]).toEqual([200, "ok\n"]);
    await callApi(server.t, key, "DELETE", `/sandboxes/${sandbox.body.id}`);
  }, 120_000);

  test("E2B's stock SDK meets the same limits: past the plan's sandboxes and past the command rate it raises RateLimitError", async () => {
    const apiKey = await server.keyFor("e2b-limits@example.com");
    const options = { apiKey, apiUrl: server.env.E2B_API_URL, sandboxUrl: server.env.E2B_SANDBOX_URL };
    const creates = await Promise.allSettled(
      Array.from({ length: 7 }, () => Sandbox.create("base", { ...options, timeoutMs: 300_000 })),
    );
    const sandboxes = creates.flatMap((create) => (create.status === "fulfilled" ? [create.value] : []));
    try {
      expect(sandboxes.length).toBeLessThanOrEqual(5);
      for (const create of creates.filter((create) => create.status === "rejected"))
        expect((create as PromiseRejectedResult).reason).toBeInstanceOf(RateLimitError);
      const sandbox = sandboxes[0] as Sandbox;
      await nextWindow(10);
      const runs = await Promise.allSettled(Array.from({ length: 130 }, () => sandbox.commands.run("true")));
      const limited = runs.filter((run) => run.status === "rejected");
      expect(runs.length - limited.length).toBeLessThanOrEqual(100);
      expect(limited.length).toBeGreaterThanOrEqual(30);
      for (const run of limited) expect((run as PromiseRejectedResult).reason).toBeInstanceOf(RateLimitError);
    } finally {
      await Promise.all(sandboxes.map((sandbox) => sandbox.kill()));
    }
  }, 240_000);

  test("a login flood on someone's email does not lock its owner out, and guesses stay throttled", async () => {
    const email = "victim@example.com";
    const login = (address: string, guess: string) =>
      callFrom(address, url("/auth/login"), "POST", { email, password: guess });
    // The owner signs up and logs in from their usual address.
    await account(email, "127.0.0.20");

    // One attacker address: 5 guesses, then 429 with Retry-After.
    const flood: number[] = [];
    for (let i = 0; i < 12; i++) flood.push((await login("127.0.0.21", `guess ${i}`)).status);
    expect(flood).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    const refused = await login("127.0.0.21", `guess again`);
    expect(refused.body.code).toBe("rate_limited");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);

    // A second attacker address gets 5 more; then the email's budget for unknown addresses is spent.
    const second: number[] = [];
    for (let i = 0; i < 7; i++) second.push((await login("127.0.0.22", `other guess ${i}`)).status);
    expect(second).toEqual([...Array(5).fill(401), ...Array(2).fill(429)]);
    expect((await login("127.0.0.23", "third address")).status).toBe(429);
    // Even the right password from the attackers' addresses is refused while throttled.
    expect((await login("127.0.0.21", password)).status).toBe(429);

    // The owner, from an address they logged in from before, gets in at once.
    const owner = await login("127.0.0.20", password);
    expect(owner.status).toBe(200);
    expect(owner.body.account.email).toBe(email);
  });
});
