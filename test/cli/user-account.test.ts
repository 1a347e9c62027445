import { statSync } from "node:fs";
import { dirname } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine, paddockBin, password, TmuxPane } from "./user-cli.js";

interface ApiKey {
  id: string;
  name: string | null;
  scope: string | null;
  expiresAt: string | null;
}

describe("paddock signup, login, logout and keys", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("signup logs in and keeps the session and the address in a file only its owner reads", async () => {
    const user = new CliUser(t.url);
    const signup = await user.run(["signup", "--email", "ada@example.com", "--password", password]);
    expect(signup).toMatchObject({ status: 0, stderr: "" });
    expect(signup.stdout).toContain("ada@example.com");
    expect(statSync(user.configFile).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(user.configFile)).mode & 0o777).toBe(0o700);
    expect(user.storedConfig()).toMatchObject({
      baseUrl: t.url,
      credential: { kind: "session", email: "ada@example.com" },
    });
    // The stored session works without any variable or flag naming the server or a key.
    const keys = await user.run(["keys", "list", "--json"], { env: { PADDOCK_BASE_URL: "" } });
    expect(keys.status).toBe(0);
    expect(JSON.parse(keys.stdout)).toEqual([]);

    const again = await user.run(["signup", "--email", "ada@example.com", "--password", password]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(errorLine("email_taken"));
  });

  test("login: a wrong password, missing credentials without a terminal, and logout ending the session", async () => {
    const user = new CliUser(t.url);
    await user.signUp("grace");
    const wrong = await user.run(["login", "--email", "grace@example.com", "--password", "not it"]);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(errorLine("invalid_credentials"));
    const missing = await user.run(["login", "--email", "grace@example.com"]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(errorLine("usage"));
    expect(missing.stderr).toContain("--password");

    const login = await user.run(["login", "--email", "grace@example.com", "--password", password]);
    expect(login.status).toBe(0);
    const session = user.storedConfig().credential?.secret as string;
    const me = () => fetch(`${t.url}/auth/me`, { headers: { authorization: `Bearer ${session}` } });
    expect((await me()).status).toBe(200);

    const logout = await user.run(["logout"]);
    expect(logout.status).toBe(0);
    expect((await me()).status).toBe(401);
    expect(user.storedConfig()).toEqual({ baseUrl: t.url });
    const after = await user.run(["keys", "list"]);
    expect(after.status).toBe(1);
    expect(after.stderr).toMatch(errorLine("not_logged_in"));
  });

  test("login --api-key stores a key the server knows and refuses one it does not", async () => {
    const owner = new CliUser(t.url);
    await owner.signUp("linus");
    const { secret } = await owner.json<{ secret: string }>(["keys", "create", "--name", "laptop"]);
    const scoped = await owner.json<{ secret: string }>(["keys", "create", "--scope", "memory"]);

    const user = new CliUser(t.url);
    const refused = await user.run(["login", "--api-key", "pk_not_a_key"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(errorLine("unauthorized"));
    expect((await user.run(["login", "--api-key", secret])).status).toBe(0);
    expect(user.storedConfig().credential).toEqual({ kind: "api-key", secret });
    expect((await user.run(["sandbox", "list", "--json"])).stdout.trim()).toBe("[]");
    // A scoped key is a real key, though /auth/me is outside its scope.
    expect((await user.run(["login", "--api-key", scoped.secret])).status).toBe(0);
    expect((await user.run(["logout"])).status).toBe(0);
    expect(user.storedConfig().credential).toBeUndefined();
  });

  test("the address: --base-url over PADDOCK_BASE_URL over the stored one; the key: --api-key over PADDOCK_API_KEY over the stored one", async () => {
    const user = new CliUser(t.url);
    await user.signUp("barbara");
    const nowhere = "http://127.0.0.1:9"; // the discard port: nothing listens
    const viaEnv = await user.run(["keys", "list"], { env: { PADDOCK_BASE_URL: nowhere } });
    expect(viaEnv.status).toBe(1);
    expect(viaEnv.stderr).toMatch(errorLine("connection_failed"));
    const viaFlag = await user.run(["--base-url", t.url, "keys", "list"], {
      env: { PADDOCK_BASE_URL: nowhere },
    });
    expect(viaFlag.status).toBe(0);
    // The global option goes after the command too.
    expect(
      (await user.run(["keys", "list", "--base-url", t.url], { env: { PADDOCK_BASE_URL: nowhere } })).status,
    ).toBe(0);

    const badEnvKey = await user.run(["keys", "list"], { env: { PADDOCK_API_KEY: "pk_wrong" } });
    expect(badEnvKey.status).toBe(1);
    expect(badEnvKey.stderr).toMatch(errorLine("unauthorized"));
    const { secret } = await user.json<{ secret: string }>(["keys", "create"]);
    const flagOverEnv = await user.run(["keys", "list", "--api-key", secret], {
      env: { PADDOCK_API_KEY: "pk_wrong" },
    });
    expect(flagOverEnv.status).toBe(0);
    const badFlag = await user.run(["keys", "list", "--api-key", "pk_wrong"]);
    expect(badFlag.stderr).toMatch(errorLine("unauthorized"));
  });

  test("keys: create with a name, a scope and an expiry; list; rotate; delete", async () => {
    const user = new CliUser(t.url);
    await user.signUp("edsger");
    const created = await user.json<{ key: ApiKey; secret: string }>([
      "keys",
      "create",
      "--name",
      "ci",
      "--scope",
      "sandboxes",
      "--expires-at",
      "2099-01-01T00:00:00Z",
    ]);
    expect(created.key).toMatchObject({
      name: "ci",
      scope: "sandboxes",
      expiresAt: "2099-01-01T00:00:00.000Z",
    });
    expect(created.secret).toMatch(/^pk_/);
    const text = await user.run(["keys", "list"]);
    expect(text.stdout).toMatch(/^ID +NAME +PREFIX +SCOPE +CREATED +EXPIRES +LAST USED\n/);
    expect(text.stdout).toContain(created.key.id);
    const rotated = await user.json<{ key: ApiKey; secret: string }>(["keys", "rotate", created.key.id]);
    expect(rotated.key.id).toBe(created.key.id);
    expect(rotated.secret).not.toBe(created.secret);
    const old = await user.run(["sandbox", "list", "--api-key", created.secret]);
    expect(old.stderr).toMatch(errorLine("unauthorized"));
    expect((await user.run(["sandbox", "list", "--api-key", rotated.secret])).status).toBe(0);
    expect((await user.run(["keys", "delete", created.key.id])).status).toBe(0);
    expect(await user.json<ApiKey[]>(["keys", "list"])).toEqual([]);
    const gone = await user.run(["keys", "delete", created.key.id]);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(errorLine("key_not_found"));
    const badScope = await user.run(["keys", "create", "--scope", "everything"]);
    expect(badScope.status).toBe(2);
    expect(badScope.stderr).toMatch(errorLine("usage"));
  });

  test("login on a terminal asks for what is missing and never shows the password", async () => {
    const user = new CliUser(t.url);
    await user.signUp("margaret");
    const pane = new TmuxPane(
      `${user.shellEnvironment()} ${process.execPath} ${paddockBin} login; echo EXIT=$?; sleep 60`,
      {
        cols: 100,
        rows: 20,
      },
    );
    try {
      await pane.waitFor("Email:", 10_000);
      pane.type("margaret@example.com");
      await pane.waitFor("Password:", 10_000);
      pane.type(password);
      await pane.waitFor("EXIT=0", 10_000);
      expect(pane.screen()).toContain("Logged in as margaret@example.com");
      expect(pane.screen()).not.toContain(password);
      expect(pane.screen()).not.toContain("*".repeat(password.length));
    } finally {
      pane.close();
    }
    expect(user.storedConfig().credential).toMatchObject({ kind: "session", email: "margaret@example.com" });
  });
});
