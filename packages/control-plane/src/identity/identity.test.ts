import { defaultConfig, type PaddockConfig, sha256 } from "@paddock/common";
import { createTestDatabase, type DatabaseHandle, type Db, testEngines } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { RateCounters } from "../http/rate-limit.js";
import { AccountLimits } from "../plans/account-limits.js";
import { Identity } from "./identity.js";
import { LoginThrottle } from "./login-throttle.js";
import { hashPassword, verifyPassword } from "./passwords.js";

/** An Identity as the control plane makes one, with the configuration's limits unless `limits` says otherwise. */
function identityOver(
  db: Db,
  limits: Pick<PaddockConfig, "plans" | "rate_limits"> = defaultConfig,
): Identity {
  const counters = new RateCounters(db, "test secret");
  return new Identity(db, {
    limits: new AccountLimits(db, counters, limits),
    loginThrottle: new LoginThrottle(db, counters, "test secret", limits.rate_limits),
  });
}

describe("passwords", () => {
  test("scrypt with a salt per password: equal passwords hash differently and both verify", async () => {
    const [a, b] = await Promise.all([hashPassword("same password"), hashPassword("same password")]);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword("same password", a)).toBe(true);
    expect(await verifyPassword("same password", b)).toBe(true);
    expect(await verifyPassword("other password", a)).toBe(false);
    expect(await verifyPassword("same password", "not a hash")).toBe(false);
  });
});

describe.each(testEngines)("identity on %s", (engine) => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let handle: DatabaseHandle;
  let identity: Identity;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    handle = await database.open();
    identity = identityOver(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
    await database?.drop();
  });

  test("concurrent signups for one email: exactly one account", async () => {
    const results = await Promise.allSettled(
      ["Race@Example.com", "race@example.com", " race@example.com "].map((email) =>
        identity.signup(email, "correct horse battery", "192.0.2.10"),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results.filter((result) => result.status === "rejected"))
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "email_taken", status: 409 });
    const rows = await handle.db
      .selectFrom("accounts")
      .select("email")
      .where("email", "=", "race@example.com")
      .execute();
    expect(rows).toHaveLength(1);
  });

  test("only hashes are stored: no session token, key secret or password in any row", async () => {
    const account = await identity.signup("stored@example.com", "correct horse battery", "192.0.2.10");
    const session = await identity.login("stored@example.com", "correct horse battery", "192.0.2.1");
    const { secret } = await identity.createKey(account.id, { name: "ci", scope: "sandboxes" });
    const dump = JSON.stringify([
      await handle.db.selectFrom("accounts").selectAll().execute(),
      await handle.db.selectFrom("sessions").selectAll().execute(),
      await handle.db.selectFrom("api_keys").selectAll().execute(),
    ]);
    for (const plain of ["correct horse battery", session.token, secret]) expect(dump).not.toContain(plain);
    expect(dump).toContain(sha256(secret));
    expect(dump).toContain(sha256(session.token));
  });

  test("keys: last use recorded, scope kept, rotation and deletion end the old secret at once", async () => {
    const account = await identity.signup("keys@example.com", "correct horse battery", "192.0.2.10");
    const { key, secret } = await identity.createKey(account.id, { scope: "memory" });
    expect(key.lastUsedAt).toBeNull();
    expect(await identity.authenticate(secret)).toMatchObject({
      accountId: account.id,
      via: "key",
      scope: "memory",
    });
    expect((await identity.listKeys(account.id))[0]?.lastUsedAt).not.toBeNull();
    const rotated = await identity.rotateKey(account.id, key.id);
    expect(rotated.key.prefix).not.toBe(key.prefix);
    await expect(identity.authenticate(secret)).rejects.toMatchObject({ code: "unauthorized" });
    await identity.authenticate(rotated.secret);
    // Another account can neither rotate nor delete it.
    const other = await identity.signup("other@example.com", "correct horse battery", "192.0.2.10");
    await expect(identity.rotateKey(other.id, key.id)).rejects.toMatchObject({ code: "key_not_found" });
    await expect(identity.deleteKey(other.id, key.id)).rejects.toMatchObject({ code: "key_not_found" });
    await identity.deleteKey(account.id, key.id);
    await expect(identity.authenticate(rotated.secret)).rejects.toMatchObject({ code: "unauthorized" });
  });

  test("expired keys and sessions are refused; a past expiry is refused at creation", async () => {
    const account = await identity.signup("expiry@example.com", "correct horse battery", "192.0.2.10");
    await expect(
      identity.createKey(account.id, { expiresAt: new Date(Date.now() - 1000).toISOString() }),
    ).rejects.toMatchObject({ code: "invalid_request", status: 400 });
    const { key, secret } = await identity.createKey(account.id, {
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    await identity.authenticate(secret);
    await handle.db
      .updateTable("api_keys")
      .set({ expires_at: new Date(Date.now() - 1).toISOString() })
      .where("id", "=", key.id)
      .execute();
    // Changed behind this process's back: a fresh Identity (another process) sees it at once.
    const elsewhere = identityOver(handle.db);
    await expect(elsewhere.authenticate(secret)).rejects.toMatchObject({ code: "key_expired", status: 401 });

    const session = await identity.login("expiry@example.com", "correct horse battery", "192.0.2.2");
    await identity.authenticate(session.token);
    await handle.db
      .updateTable("sessions")
      .set({ expires_at: new Date(Date.now() - 1).toISOString() })
      .where("token_hash", "=", sha256(session.token))
      .execute();
    await expect(elsewhere.authenticate(session.token)).rejects.toMatchObject({ code: "unauthorized" });
  });

  test("a credential authenticated a moment ago is not served past its own expiry", async () => {
    const account = await identity.signup("soon@example.com", "correct horse battery", "192.0.2.10");
    const { secret } = await identity.createKey(account.id, {
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expect(await identity.authenticate(secret)).toMatchObject({ accountId: account.id });
    expect(await identity.authenticate(secret)).toMatchObject({ accountId: account.id });
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await expect(identity.authenticate(secret)).rejects.toMatchObject({ code: "key_expired" });
  });

  test("logout ends a session at once, even one just used; other sessions go on", async () => {
    await identity.signup("logout@example.com", "correct horse battery", "192.0.2.10");
    const first = await identity.login("logout@example.com", "correct horse battery", "192.0.2.4");
    const second = await identity.login("logout@example.com", "correct horse battery", "192.0.2.4");
    const principal = await identity.authenticate(first.token);
    await identity.authenticate(second.token);
    await identity.logout(principal);
    await expect(identity.authenticate(first.token)).rejects.toMatchObject({ code: "unauthorized" });
    expect(await identity.authenticate(second.token)).toMatchObject({ via: "session" });
  });

  test("a lookup that races a revocation does not bring the credential back", async () => {
    const account = await identity.signup("race-revoke@example.com", "correct horse battery", "192.0.2.10");
    const { key, secret } = await identity.createKey(account.id, {});
    // Started before the deletion, answered (from the database) around it.
    const [inFlight] = await Promise.allSettled([
      identity.authenticate(secret),
      identity.deleteKey(account.id, key.id),
    ]);
    expect(["fulfilled", "rejected"]).toContain(inFlight.status);
    await expect(identity.authenticate(secret)).rejects.toMatchObject({ code: "unauthorized" });
  });

  test("an unknown email costs a password check and answers like a wrong password", async () => {
    await expect(identity.login("nobody@example.com", "whatever it is", "192.0.2.3")).rejects.toMatchObject({
      code: "invalid_credentials",
      status: 401,
    });
  });
});
