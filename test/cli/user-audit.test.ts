import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine } from "./user-cli.js";

describe("paddock audit: the account's audit log, and the operator's export", () => {
  let t: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("audited");
    // A key with a name a spreadsheet would run as a formula.
    expect((await user.run(["keys", "create", "--name", "=HYPERLINK(1)"])).status).toBe(0);
    expect((await user.run(["secrets", "set", "TOKEN", "kept-out-of-the-log"])).status).toBe(0);
    const other = new CliUser(t.url);
    await other.signUp("other");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("lists the account's events as a table or JSON, filtered by type and time", async () => {
    const table = await user.run(["audit"]);
    expect([table.status, table.stderr]).toEqual([0, ""]);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TIME\s+TYPE\s+ACTOR\s+ADDRESS\s+TARGET\s+DETAILS$/);
    expect(lines[1]).toMatch(/secret\.created\s+session session:\w+\s+127\.0\.0\.1\s+secret TOKEN/);
    expect(table.stdout).toMatch(/key\.created .* key =HYPERLINK\(1\)/);
    expect(table.stdout).toMatch(/auth\.login_succeeded\s+password\s+127\.0\.0\.1/);

    const keys = await user.run(["audit", "--type", "key.", "--json"]);
    expect(keys.status).toBe(0);
    const events = JSON.parse(keys.stdout) as Array<{ type: string; target: { name: string } }>;
    expect(events.map((event) => [event.type, event.target.name])).toEqual([
      ["key.created", "=HYPERLINK(1)"],
    ]);
    const future = await user.run(["audit", "--since", "2999-01-01T00:00:00Z", "--json"]);
    expect(JSON.parse(future.stdout)).toEqual([]);
    const limited = await user.run(["audit", "--limit", "2", "--json"]);
    expect(JSON.parse(limited.stdout)).toHaveLength(2);
    expect(table.stdout).not.toContain("kept-out-of-the-log");
    expect(table.stdout).not.toContain("other@example.com");

    const bad = await user.run(["audit", "--since", "yesterday"]);
    expect([bad.status, bad.stderr]).toEqual([2, expect.stringMatching(errorLine("usage"))]);
  });

  test("the operator exports from the server's database: every account or one, as JSON lines or CSV", async () => {
    const operator = { PADDOCK_DATABASE_URL: t.config.database.url };
    const all = await user.run(["audit", "export"], { env: operator });
    expect([all.status, all.stderr]).toEqual([0, ""]);
    const rows = all.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; accountId: string });
    const accounts = new Set(rows.map((row) => row.accountId));
    expect(accounts.size).toBe(2);
    // Oldest first: the first account's sign-up opens the log.
    expect(rows[0]?.type).toBe("account.signed_up");

    const csv = await user.run(["audit", "export", "--account", "audited@example.com", "--format", "csv"], {
      env: operator,
    });
    expect(csv.status).toBe(0);
    const lines = csv.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(
      "id,account_id,at,type,actor_kind,actor_id,actor_name,actor_address,target_type,target_id,target_name,details",
    );
    expect(lines.slice(1).map((line) => line.split(",")[3])).toEqual([
      "account.signed_up",
      "auth.login_succeeded",
      "key.created",
      "secret.created",
    ]);
    // The formula is defused; details are a quoted JSON cell.
    expect(csv.stdout).toContain(",'=HYPERLINK(1),");
    expect(csv.stdout).not.toContain("kept-out-of-the-log");
    const since = await user.run(["audit", "export", "--since", "2999-01-01T00:00:00Z"], { env: operator });
    expect([since.status, since.stdout]).toEqual([0, ""]);

    const unknown = await user.run(["audit", "export", "--account", "nobody@example.com"], { env: operator });
    expect([unknown.status, unknown.stderr]).toEqual([1, "paddock: no account nobody@example.com\n"]);
  });
});
