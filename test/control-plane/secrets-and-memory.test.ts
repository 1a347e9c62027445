import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { createLogger } from "@paddock/common";
import { bashIn, testDocker } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { InvalidRequestError, NotFoundError, Paddock, PaddockError, PermissionError, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callApi } from "../support/user.js";

// Secrets and memory through the SDK against a real server (real sandboxes, both engines). The
// server logs at trace level into memory so the last test can look for secret values there.

async function caught(promise: Promise<unknown>): Promise<PaddockError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof PaddockError)) throw new Error(`expected a PaddockError, got ${String(error)}`);
  return error;
}

describe.each(["sqlite", "postgres"] as const)("secrets and memory on %s", (engine) => {
  let t: TestServer;
  const logLines: string[] = [];
  let client: Paddock;
  let other: Paddock;
  let connection: { baseUrl: string; apiKey: string };
  const secretValue = `sk-test-${randomBytes(12).toString("hex")}`;

  const login = async (email: string) => {
    await Paddock.signup(email, "correct horse battery", { baseUrl: t.url });
    return (await Paddock.login(email, "correct horse battery", { baseUrl: t.url })).client;
  };
  const raw = (method: string, path: string, apiKey: string, body?: unknown) =>
    callApi(t, apiKey, method, path, body);

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    t = await startTestServer({
      engine,
      logger: createLogger({ level: "trace", destination }),
      // One key sends a dozen refused creates within seconds here; refused ones count against
      // the create rate too (decision 0170), which is not what these tests are about.
      config: { rate_limits: { creates_per_key: 50, creates_per_account: 50 } },
    });
    client = await login("owner@example.com");
    other = await login("other@example.com");
    connection = { baseUrl: t.url, apiKey: (await client.keys.create({ name: "all" })).secret };
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("a stored secret reaches a real sandbox's processes, and no answer, row or container config", async () => {
    const created = await client.secrets.set("MODEL_KEY", "first value");
    expect(created).toEqual({
      name: "MODEL_KEY",
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
    });
    const replaced = await client.secrets.set("MODEL_KEY", secretValue);
    expect(replaced.createdAt).toBe(created.createdAt);
    expect(replaced.updatedAt >= created.updatedAt).toBe(true);
    expect(await client.secrets.list()).toEqual([replaced]);

    const sandbox = await Sandbox.create({
      ...connection,
      template: "python",
      timeoutSeconds: 600,
      env: { PLAIN: "visible" },
      secrets: { OPENAI_API_KEY: "MODEL_KEY" },
    });
    try {
      expect((await sandbox.commands.run("printenv OPENAI_API_KEY")).stdout).toBe(`${secretValue}\n`);
      expect((await sandbox.commands.run("printenv PLAIN")).stdout).toBe("visible\n");
      expect(
        (await sandbox.commands.run(`python3 -c "import os; print(os.environ['OPENAI_API_KEY'])"`)).stdout,
      ).toBe(`${secretValue}\n`);

      // Code contexts get them too, and they survive a pause.
      const code = await sandbox.runCode("import os; os.environ['OPENAI_API_KEY']");
      expect(code.results[0]).toMatchObject({ "text/plain": `'${secretValue}'` });
      await sandbox.pause();
      await expect.poll(async () => (await sandbox.refresh()).state).toBe("Paused");
      await sandbox.resume();
      await expect.poll(async () => (await sandbox.refresh()).state).toBe("Running");
      expect((await sandbox.commands.run("printenv OPENAI_API_KEY")).stdout).toBe(`${secretValue}\n`);

      // Not in any answer about the sandbox or the secrets.
      for (const path of ["/secrets", `/sandboxes/${sandbox.id}`, "/sandboxes"]) {
        const answer = await raw("GET", path, connection.apiKey);
        expect(answer.status, path).toBe(200);
        expect(answer.text, path).not.toContain(secretValue);
      }
      // Not in the database in clear.
      const db = t.server.stack.database.db;
      for (const table of ["secrets", "sandboxes", "sandbox_events"] as const) {
        const rows = await db.selectFrom(table).selectAll().execute();
        expect(JSON.stringify(rows), table).not.toContain(secretValue);
      }
      // Not in the container's configuration (kept on disk by the engine, copied into snapshots).
      const inspected = await testDocker.getContainer(sandbox.id).inspect();
      expect(JSON.stringify(inspected)).not.toContain(secretValue);
      expect(JSON.stringify(inspected.Config.Env)).toContain("PLAIN=visible");
      expect((await bashIn(sandbox.id, "cat /proc/1/environ")).output).not.toContain(secretValue);
    } finally {
      await sandbox.kill();
    }

    // The SDK's list form: the secret under its own name.
    const named = await Sandbox.create({ ...connection, template: "ubuntu", secrets: ["MODEL_KEY"] });
    try {
      expect((await named.commands.run("printenv MODEL_KEY")).stdout).toBe(`${secretValue}\n`);
    } finally {
      await named.kill();
    }
  });

  test("a create naming an unknown secret, or naming a variable twice, is refused and creates nothing", async () => {
    await client.secrets.set("PRESENT", "here");
    const before = (await Sandbox.list(connection)).pagination.totalItems;
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ secrets: { TOKEN: "ABSENT" } }, 400, "unknown_secret"],
      [{ secrets: { TOKEN: "PRESENT", OTHER: "ABSENT" } }, 400, "unknown_secret"],
      [{ secrets: { TOKEN: "PRESENT" }, env: { TOKEN: "plain" } }, 400, "invalid_request"],
      [{ secrets: { "1BAD": "PRESENT" } }, 400, "invalid_request"],
      [{ secrets: { "BAD-NAME": "PRESENT" } }, 400, "invalid_request"],
      [{ secrets: { TOKEN: "bad name" } }, 400, "invalid_request"],
      [{ secrets: ["PRESENT"] }, 400, "invalid_request"],
      [{ secrets: { TOKEN: 7 } }, 400, "invalid_request"],
    ];
    for (const [extra, status, code] of cases) {
      const answer = await raw("POST", "/sandboxes", connection.apiKey, { template: "ubuntu", ...extra });
      expect([answer.status, answer.body?.code], JSON.stringify(extra)).toEqual([status, code]);
    }
    const error = await caught(
      Sandbox.create({ ...connection, template: "ubuntu", secrets: { TOKEN: "ABSENT" } }),
    );
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.code).toBe("unknown_secret");
    expect((await Sandbox.list(connection)).pagination.totalItems).toBe(before);
  });

  test("bad secrets are refused with a code and change nothing", async () => {
    const before = await client.secrets.list();
    const cases: Array<[unknown, number, string]> = [
      [{ name: "1STARTS_WITH_DIGIT", value: "v" }, 400, "invalid_request"],
      [{ name: "has-dash", value: "v" }, 400, "invalid_request"],
      [{ name: "", value: "v" }, 400, "invalid_request"],
      [{ name: "A".repeat(129), value: "v" }, 400, "invalid_request"],
      [{ name: "OK_NAME", value: "" }, 400, "invalid_request"],
      [{ name: "OK_NAME", value: "nul\u0000inside" }, 400, "invalid_request"],
      [{ name: "OK_NAME", value: 42 }, 400, "invalid_request"],
      [{ name: "OK_NAME" }, 400, "invalid_request"],
      [{ name: "OK_NAME", value: "v", extra: true }, 400, "invalid_request"],
      [{ name: "OK_NAME", value: "x".repeat(64 * 1024 + 1) }, 413, "secret_too_large"],
      ["{not json", 400, "invalid_json"],
    ];
    for (const [body, status, code] of cases) {
      const answer = await raw("POST", "/secrets", connection.apiKey, body);
      expect([answer.status, answer.body?.code], JSON.stringify(body).slice(0, 80)).toEqual([status, code]);
    }
    const missing = await caught(client.secrets.delete("NO_SUCH_SECRET"));
    expect([missing.status, missing.code]).toEqual([404, "secret_not_found"]);
    expect(await client.secrets.list()).toEqual(before);
  });

  test("another account sees none of it: 404 on delete, empty lists and searches, unknown in creates", async () => {
    await client.secrets.set("PRIVATE", "owner only");
    const entry = await client.memory.add("the owner's private note about zebras");
    expect(await other.secrets.list()).toEqual([]);
    await expect(other.secrets.delete("PRIVATE")).rejects.toBeInstanceOf(NotFoundError);
    const otherKey = (await other.keys.create()).secret;
    const refused = await caught(
      Sandbox.create({ baseUrl: t.url, apiKey: otherKey, template: "ubuntu", secrets: ["PRIVATE"] }),
    );
    expect(refused.code).toBe("unknown_secret");
    expect((await other.memory.list()).items).toEqual([]);
    expect(await other.memory.search("zebras")).toEqual([]);
    const gone = await caught(other.memory.delete(entry.id));
    expect([gone.status, gone.code]).toEqual([404, "memory_not_found"]);
    // Same name in both accounts: two secrets.
    await other.secrets.set("PRIVATE", "other's own");
    expect((await client.secrets.list()).map((secret) => secret.name)).toContain("PRIVATE");
    expect((await client.memory.search("zebras")).map((hit) => hit.id)).toEqual([entry.id]);
  });

  test("scoped keys: secrets and memory keys work on their surface and nowhere else", async () => {
    const secretsKey = (await client.keys.create({ scope: "secrets" })).secret;
    const memoryKey = (await client.keys.create({ scope: "memory" })).secret;
    const sandboxesKey = (await client.keys.create({ scope: "sandboxes" })).secret;
    const asSecrets = new Paddock({ baseUrl: t.url, apiKey: secretsKey });
    const asMemory = new Paddock({ baseUrl: t.url, apiKey: memoryKey });

    await asSecrets.secrets.set("SCOPED", "via scoped key");
    expect((await asSecrets.secrets.list()).map((secret) => secret.name)).toContain("SCOPED");
    await asSecrets.secrets.delete("SCOPED");
    const added = await asMemory.memory.add("written with a memory key");
    expect((await asMemory.memory.search("memory key")).map((hit) => hit.id)).toContain(added.id);
    await asMemory.memory.delete(added.id);

    const refusals: Array<[string, string, string]> = [
      [secretsKey, "GET", "/memory"],
      [secretsKey, "GET", "/sandboxes"],
      [secretsKey, "GET", "/keys"],
      [memoryKey, "GET", "/secrets"],
      [memoryKey, "DELETE", "/secrets/PRESENT"],
      [memoryKey, "GET", "/sandboxes"],
      [sandboxesKey, "GET", "/secrets"],
      [sandboxesKey, "GET", "/memory/search?q=zebras"],
      [sandboxesKey, "POST", "/memory"],
    ];
    for (const [key, method, path] of refusals) {
      const answer = await raw(method, path, key, method === "POST" ? { content: "x" } : undefined);
      expect([answer.status, answer.body?.code], `${method} ${path}`).toEqual([403, "scope_forbidden"]);
    }
    await expect(asMemory.secrets.list()).rejects.toBeInstanceOf(PermissionError);
    // The scoped keys changed nothing on the surfaces they were refused on.
    expect((await client.secrets.list()).map((secret) => secret.name)).toContain("PRESENT");
  });

  test("memory: stored, listed by tag and page, found by relevance with snippets, deleted", async () => {
    const weak = await client.memory.add("Backups run nightly; the backup log lives in /var/log.", {
      tags: ["ops"],
    });
    const strong = await client.memory.add(
      "Postgres backups: take a base backup, then ship WAL. Restore the backup into a fresh cluster.",
      { tags: ["ops", "postgres"], metadata: { source: "runbook", reviewed: true, pages: [1, 2] } },
    );
    await client.memory.add("The office plant needs water on Mondays.", { tags: ["office"] });

    const hits = await client.memory.search("postgres backup restore");
    expect(hits.map((hit) => hit.id).slice(0, 2)).toEqual([strong.id, weak.id]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Number.POSITIVE_INFINITY);
    expect(hits[0]?.snippet).toMatch(/<mark>(Postgres|backup|Restore)/i);
    expect(hits[0]?.metadata).toEqual({ source: "runbook", reviewed: true, pages: [1, 2] });
    expect((await client.memory.search("backup", { tag: "postgres" })).map((hit) => hit.id)).toEqual([
      strong.id,
    ]);
    expect(await client.memory.search("backup", { limit: 1 })).toHaveLength(1);
    // Query syntax is never an error: operators, quotes, stars and parentheses are only separators.
    for (const query of ['"backup', "backup*", "(backup OR", "NEAR(backup restore)", "-backup", "^", "'"]) {
      const answer = await raw("GET", `/memory/search?q=${encodeURIComponent(query)}`, connection.apiKey);
      expect(answer.status, query).toBe(200);
    }
    expect(await client.memory.search("*** ()")).toEqual([]);

    const ops = await client.memory.list({ tag: "ops", pageSize: 1 });
    expect(ops.items.map((entry) => entry.id)).toEqual([strong.id]);
    expect(ops.pagination).toMatchObject({ page: 1, pageSize: 1, totalItems: 2, hasNextPage: true });
    expect((await client.memory.list({ tag: "ops", pageSize: 1, page: 2 })).items[0]?.id).toBe(weak.id);

    await client.memory.delete(weak.id);
    expect((await client.memory.search("nightly")).map((hit) => hit.id)).toEqual([]);
    await expect(client.memory.delete(weak.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  test("bad memory input is refused with a code and stores nothing", async () => {
    const before = (await client.memory.list()).pagination.totalItems;
    const posts: Array<[unknown, number, string]> = [
      [{}, 400, "invalid_request"],
      [{ content: "" }, 400, "invalid_request"],
      [{ content: "   \n\t" }, 400, "invalid_request"],
      [{ content: 5 }, 400, "invalid_request"],
      [{ content: "é".repeat(33 * 1024) }, 413, "memory_too_large"],
      [{ content: "ok", tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, 400, "invalid_request"],
      [{ content: "ok", tags: ["has space"] }, 400, "invalid_request"],
      [{ content: "ok", tags: ["x".repeat(65)] }, 400, "invalid_request"],
      [{ content: "ok", tags: "ops" }, 400, "invalid_request"],
      [{ content: "ok", metadata: ["not", "an", "object"] }, 400, "invalid_request"],
      [{ content: "ok", metadata: "text" }, 400, "invalid_request"],
      [{ content: "ok", metadata: { blob: "x".repeat(17 * 1024) } }, 413, "memory_too_large"],
      [{ content: "ok", unknown: 1 }, 400, "invalid_request"],
    ];
    for (const [body, status, code] of posts) {
      const answer = await raw("POST", "/memory", connection.apiKey, body);
      expect([answer.status, answer.body?.code], JSON.stringify(body).slice(0, 80)).toEqual([status, code]);
    }
    const gets: Array<[string, string]> = [
      ["/memory/search", "invalid_request"],
      ["/memory/search?q=", "invalid_request"],
      ["/memory/search?q=%20%20", "invalid_request"],
      [`/memory/search?q=${"a".repeat(1001)}`, "invalid_request"],
      ["/memory/search?q=x&limit=0", "invalid_request"],
      ["/memory/search?q=x&limit=51", "invalid_request"],
      ["/memory/search?q=x&tag=bad%20tag", "invalid_request"],
      ["/memory?page=0", "invalid_request"],
      ["/memory?pageSize=201", "invalid_request"],
      ["/memory?tag=a&tag=b", "invalid_request"],
    ];
    for (const [path, code] of gets) {
      const answer = await raw("GET", path, connection.apiKey);
      expect([answer.status, answer.body?.code], path).toEqual([400, code]);
    }
    expect((await client.memory.list()).pagination.totalItems).toBe(before);
  });

  // Last: it reads everything the server logged during the other tests.
  test("secret values never reach the log, even at trace level", () => {
    const text = logLines.join("");
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain("/secrets");
    expect(text).not.toContain(secretValue);
  });
});

describe("secrets in a sandbox claimed from a warm pool", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { pools: { sizes: { ubuntu: 1 }, max_total: 2 } } });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("the claimed sandbox gets the values as a cold one does", async () => {
    await Paddock.signup("pool@example.com", "correct horse battery", { baseUrl: t.url });
    const { client } = await Paddock.login("pool@example.com", "correct horse battery", { baseUrl: t.url });
    const value = `pooled-${randomBytes(8).toString("hex")}`;
    await client.secrets.set("POOLED", value);
    const db = t.server.stack.database.db;
    await expect
      .poll(() => t.server.stack.pools.readyCount("ubuntu"), { timeout: 120_000, interval: 500 })
      .toBe(1);
    const warm = await db.selectFrom("sandboxes").select("id").where("pooled_for", "=", "ubuntu").execute();
    const apiKey = (await client.keys.create()).secret;
    const sandbox = await Sandbox.create({
      baseUrl: t.url,
      apiKey,
      template: "ubuntu",
      env: { PLAIN: "x" },
      secrets: ["POOLED"],
    });
    expect(warm.map((row) => row.id)).toContain(sandbox.id);
    expect((await sandbox.commands.run("printenv POOLED PLAIN")).stdout).toBe(`${value}\nx\n`);
    expect(JSON.stringify(await testDocker.getContainer(sandbox.id).inspect())).not.toContain(value);
    await sandbox.kill();
  });
});
