import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine } from "./user-cli.js";

interface MemoryEntry {
  id: string;
  content: string;
  tags: string[];
}

describe("paddock templates, usage, secrets and memory", () => {
  let t: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("data");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("templates list: the catalogue as JSON and as a table", async () => {
    const templates = await user.json<Array<{ id: string; name: string; ports: Array<{ port: number }> }>>([
      "templates",
      "list",
    ]);
    expect(templates.map((template) => template.id)).toEqual(
      expect.arrayContaining(["python", "node", "desktop"]),
    );
    expect(templates.find((template) => template.id === "desktop")?.ports.map((port) => port.port)).toContain(
      6080,
    );
    const table = await user.run(["templates", "list"]);
    expect(table.stdout).toMatch(/^ID +NAME +PORTS +DESCRIPTION\n/);
    expect(table.stdout).toMatch(/^desktop +Desktop +6080 \(novnc\), 5900 \(vnc\) +An Xfce desktop/m);
    expect(table.stdout.trim().split("\n")).toHaveLength(templates.length + 1);
  });

  test("usage: the plan and its minutes, as JSON and as a bar", async () => {
    const usage = await user.json<{
      plan: { id: string };
      usedMinutes: number;
      includedMinutes: number | null;
    }>(["usage"]);
    expect(usage.plan.id).toBe("free");
    expect(usage.includedMinutes).toBeGreaterThan(0);
    const text = await user.run(["usage"]);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^plan: +Free \(free\)$/m);
    expect(text.stdout).toMatch(
      new RegExp(`^minutes: +\\[[█░]{40}\\] \\d+% \\d+\\.\\d of ${usage.includedMinutes} min$`, "m"),
    );
    // A key scoped to memory may not read usage: the server's code, in one line.
    const { secret } = await user.json<{ secret: string }>(["keys", "create", "--scope", "memory"]);
    const scoped = await user.run(["usage", "--api-key", secret]);
    expect(scoped.status).toBe(1);
    expect(scoped.stderr).toMatch(errorLine("scope_forbidden"));
  });

  test("secrets: set from an argument and from stdin, list names only, delete", async () => {
    expect((await user.run(["secrets", "set", "API_TOKEN", "from-an-argument"])).status).toBe(0);
    expect((await user.run(["secrets", "set", "PIPED"], { input: "from stdin\n" })).status).toBe(0);
    const listed = await user.json<Array<{ name: string }>>(["secrets", "list"]);
    expect(listed.map((secret) => secret.name).sort()).toEqual(["API_TOKEN", "PIPED"]);
    const table = await user.run(["secrets", "list"]);
    expect(table.stdout).toMatch(/^NAME +CREATED +UPDATED\n/);
    expect(table.stdout).not.toContain("from-an-argument");
    // The value reached the server as given: one trailing newline of the pipe dropped.
    const sandbox = await user.json<{ id: string }>(["sandbox", "create", "--secret", "PIPED=VALUE"]);
    expect((await user.run(["exec", sandbox.id, "--", "sh", "-c", 'printf "[%s]" "$VALUE"'])).stdout).toBe(
      "[from stdin]",
    );
    expect((await user.run(["secrets", "delete", "PIPED"])).status).toBe(0);
    const gone = await user.run(["secrets", "delete", "PIPED"]);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(errorLine("secret_not_found"));
    const invalid = await user.run(["secrets", "set", "1BAD", "x"]);
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toMatch(errorLine("invalid_request"));
  });

  test("memory: add with tags, list, search, delete", async () => {
    const first = await user.json<MemoryEntry>([
      "memory",
      "add",
      "The deploy key lives in the vault",
      "--tag",
      "ops",
      "--tag",
      "keys",
    ]);
    expect(first).toMatchObject({ content: "The deploy key lives in the vault", tags: ["ops", "keys"] });
    const second = await user.json<MemoryEntry>(["memory", "add", "Lunch is at noon"]);
    const listed = await user.json<MemoryEntry[]>(["memory", "list"]);
    expect(listed.map((entry) => entry.id)).toEqual([second.id, first.id]);
    expect(
      (await user.json<MemoryEntry[]>(["memory", "list", "--tag", "ops"])).map((entry) => entry.id),
    ).toEqual([first.id]);
    const hits = await user.json<Array<MemoryEntry & { score: number }>>(["memory", "search", "vault"]);
    expect(hits.map((hit) => hit.id)).toEqual([first.id]);
    const table = await user.run(["memory", "search", "vault"]);
    expect(table.stdout).toMatch(
      new RegExp(`^SCORE +ID +CREATED +TAGS +CONTENT\\n\\S+ +${first.id} .* ops, keys +The deploy key`),
    );
    expect((await user.run(["memory", "delete", first.id])).status).toBe(0);
    expect(await user.json<MemoryEntry[]>(["memory", "search", "vault"])).toEqual([]);
    const gone = await user.run(["memory", "delete", first.id]);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(errorLine("memory_not_found"));
  });
});
