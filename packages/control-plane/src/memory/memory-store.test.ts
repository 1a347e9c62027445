import { createTestDatabase, type DatabaseHandle, testEngines } from "@paddock/db";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { fts5Query, renderSnippet, searchTerms, tsQuery } from "./memory-query.js";
import { MemoryStore } from "./memory-store.js";

describe("search text becomes a safe query", () => {
  test("only words survive: quotes, operators, stars and parentheses are separators", () => {
    expect(searchTerms("\"unbalanced (NEAR foo* AND -bar) OR col:baz^ '")).toEqual([
      "unbalanced",
      "near",
      "foo",
      "and",
      "bar",
      "or",
      "col",
      "baz",
    ]);
    expect(searchTerms('  ***  ()  "" ')).toEqual([]);
    expect(searchTerms("Café café CAFÉ")).toEqual(["café"]);
    expect(fts5Query(["near", "foo"])).toBe('"near" OR "foo"');
    expect(tsQuery(["near", "foo"])).toBe("near | foo");
    expect(searchTerms("a b c d e f g h i j k l m n o p q r s t")).toHaveLength(16);
  });

  test("snippets are escaped HTML with only <mark> tags", () => {
    expect(renderSnippet("<script>alert('x')</script> & \uE000match\uE001")).toBe(
      "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; <mark>match</mark>",
    );
  });
});

describe.each(testEngines)("memory on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: DatabaseHandle;
  let memory: MemoryStore;

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    handle = await database.open();
    memory = new MemoryStore(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
    await database?.drop();
  });

  test("search ranks the better match first, with a highlighted snippet, within one account", async () => {
    const weak = await memory.add("acct_a", {
      content: "The deploy script copies files to the server every night.",
    });
    const strong = await memory.add("acct_a", {
      content: "Deploy notes: the deploy uses blue-green deploys; a failed deploy rolls back.",
      tags: ["ops"],
      metadata: { source: "wiki", depth: { level: 2 } },
    });
    await memory.add("acct_a", { content: "Unrelated: the cat sleeps on the keyboard." });
    await memory.add("acct_b", { content: "Deploy deploy deploy: another account's notes on deploys." });

    const hits = await memory.search("acct_a", "deploy rollback");
    expect(hits.map((hit) => hit.id)).toEqual([strong.id, weak.id]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score as number);
    expect(hits[0]?.snippet).toContain("<mark>");
    expect(hits[0]?.snippet.toLowerCase()).toMatch(/<mark>deploy/);
    expect(hits[0]).toMatchObject({ tags: ["ops"], metadata: { source: "wiki", depth: { level: 2 } } });
    // Stemming: "deploying" finds "deploy".
    expect((await memory.search("acct_a", "deploying")).length).toBe(2);
    expect((await memory.search("acct_a", "deploy", { tag: "ops" })).map((hit) => hit.id)).toEqual([
      strong.id,
    ]);
    expect(await memory.search("acct_c", "deploy")).toEqual([]);
  });

  test("snippets escape whatever the content holds; only the engine's marks become tags", async () => {
    await memory.add("acct_html", { content: 'Use <b>rollout</b> & "canary" <script>x()</script> steps.' });
    const [hit] = await memory.search("acct_html", "rollout");
    expect(hit?.snippet).toContain("<mark>rollout</mark>");
    expect(hit?.snippet.replaceAll("<mark>", "").replaceAll("</mark>", "")).not.toMatch(/[<>]/);
    expect(hit?.snippet).toContain("&amp;");
  });

  test("any text at all is a valid query: no exception, only this account's rows", async () => {
    await memory.add("acct_fuzz", { content: 'Tricky "quoted" text (with parens) and a star* NEAR the end' });
    const all = (await memory.list("acct_fuzz")).items.map((entry) => entry.id);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 60 }),
          fc.string({ unit: "grapheme", maxLength: 30 }),
          fc.constantFrom('"', "(", ")", "*", "NEAR(", "a:b", "-x", "^y", "AND OR NOT", "'", "\\", "\u0000"),
        ),
        async (text) => {
          const hits = await memory.search("acct_fuzz", text);
          for (const hit of hits) expect(all).toContain(hit.id);
        },
      ),
      { numRuns: 150 },
    );
    expect((await memory.search("acct_fuzz", '"quoted (with')).length).toBe(1);
  });

  test("list pages newest first and filters by tag; delete is per account", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await memory.add("acct_list", { content: `entry ${i}`, tags: i % 2 ? ["odd", "odd"] : [] })).id,
      );
    }
    const first = await memory.list("acct_list", { pageSize: 2 });
    expect(first.items.map((entry) => entry.id)).toEqual([ids[4], ids[3]]);
    expect(first.pagination).toEqual({
      page: 1,
      pageSize: 2,
      totalItems: 5,
      totalPages: 3,
      hasNextPage: true,
    });
    const last = await memory.list("acct_list", { pageSize: 2, page: 3 });
    expect(last.items.map((entry) => entry.id)).toEqual([ids[0]]);
    expect(last.pagination.hasNextPage).toBe(false);
    const odd = await memory.list("acct_list", { tag: "odd" });
    expect(odd.items.map((entry) => entry.id)).toEqual([ids[3], ids[1]]);
    expect(odd.items[0]?.tags).toEqual(["odd"]);

    await expect(memory.delete("acct_other", ids[3] as string)).rejects.toMatchObject({
      code: "memory_not_found",
    });
    await memory.delete("acct_list", ids[3] as string);
    await expect(memory.delete("acct_list", ids[3] as string)).rejects.toMatchObject({
      code: "memory_not_found",
    });
    expect((await memory.list("acct_list", { tag: "odd" })).items.map((entry) => entry.id)).toEqual([ids[1]]);
    expect(await memory.search("acct_list", "entry 3")).not.toContainEqual(
      expect.objectContaining({ id: ids[3] }),
    );
  });

  test("oversized content or metadata is refused and nothing is stored", async () => {
    await expect(memory.add("acct_big", { content: "é".repeat(40 * 1024) })).rejects.toMatchObject({
      code: "memory_too_large",
      status: 413,
    });
    await expect(
      memory.add("acct_big", { content: "fine", metadata: { blob: "x".repeat(17 * 1024) } }),
    ).rejects.toMatchObject({ code: "memory_too_large" });
    expect((await memory.list("acct_big")).pagination.totalItems).toBe(0);
  });
});
