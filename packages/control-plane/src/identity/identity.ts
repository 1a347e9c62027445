import { randomBytes } from "node:crypto";
import { Errors, invalidField, newId, newSecret, PaddockError, sha256 } from "@paddock/common";
import { type Broadcasts, type Channel, type Db, lockWithin } from "@paddock/db";
import { ControlPlaneErrors } from "../http/errors.js";
import type { AccountLimits } from "../plans/account-limits.js";
import { CredentialCache } from "./credential-cache.js";
import type { LoginThrottle } from "./login-throttle.js";
import { hashPassword, verifyPassword } from "./passwords.js";

export const scopes = ["sandboxes", "memory", "secrets"] as const;
export type Scope = (typeof scopes)[number];

/** Who is calling: an account, through a session or an API key (which may be limited to one surface). */
export interface Principal {
  accountId: string;
  via: "session" | "key";
  scope: Scope | null;
  /** Hash of the session token or id of the key that authenticated the call. */
  credential: string;
}

export interface Account {
  id: string;
  email: string;
  plan: string;
  createdAt: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  prefix: string;
  scope: Scope | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

const sessionPrefix = "ps_";
const keyPrefix = "pk_";
/** E2B's SDKs expect keys shaped `e2b_` + 40 hex digits (160 random bits, as E2B's own). */
const e2bKeyPrefix = "e2b_";

/** The shapes a key's secret can take; every shape is the same kind of key. */
export type KeyFormat = "paddock" | "e2b";

function newKeySecret(format: KeyFormat): string {
  return format === "e2b" ? e2bKeyPrefix + randomBytes(20).toString("hex") : newSecret(keyPrefix);
}

/** What a key list shows of a secret: its prefix and six characters. */
function shownPrefix(secret: string): string {
  return secret.slice(0, secret.indexOf("_") + 7);
}

function formatOf(prefix: string): KeyFormat {
  return prefix.startsWith(e2bKeyPrefix) ? "e2b" : "paddock";
}
const sessionLifetimeMs = 7 * 24 * 3600 * 1000;

export interface IdentityOptions {
  /** Sign-ups per address and API keys per plan. */
  limits: AccountLimits;
  loginThrottle: LoginThrottle;
  /** Messages between replicas (a revoked key); default: none, as for one process. */
  broadcasts?: Broadcasts | undefined;
}

/** Accounts, sessions and API keys. Secrets are stored only as SHA-256 hashes. */
export class Identity {
  private readonly limits: AccountLimits;
  private readonly loginThrottle: LoginThrottle;
  /** Recently authenticated credentials; `revocations` keeps a lookup that raced a revocation out. */
  private readonly recent = new CredentialCache();
  private revocations = 0;

  /** Tells every replica (this one included) to forget a credential it may have cached. */
  private readonly revoked: Channel | undefined;
  /** What ends each open request (a stream, a WebSocket), by the credential that opened it. */
  private readonly held = new Map<string, Set<() => void>>();

  constructor(
    private readonly db: Db,
    options: IdentityOptions,
  ) {
    this.limits = options.limits;
    this.loginThrottle = options.loginThrottle;
    this.revoked = options.broadcasts?.channel("paddock_credential_revoked", {
      onMessage: (credential) => {
        this.revocations++;
        this.recent.forget(credential);
        this.endHeld(credential);
      },
      onGap: () => {
        this.revocations++;
        this.recent.clear();
      },
    });
  }

  /** Drops a revoked credential from this replica's cache, then from every other's. */
  private async forget(credential: string): Promise<void> {
    this.recent.forget(credential);
    this.endHeld(credential);
    await this.revoked?.publish(credential);
  }

  /**
   * Calls `end` when the credential is revoked, here or on another replica, so a stream or
   * WebSocket it opened stops with it rather than outliving it. Returns what forgets `end`.
   */
  holdOpen(credential: string, end: () => void): () => void {
    const ends = this.held.get(credential) ?? new Set();
    this.held.set(credential, ends);
    ends.add(end);
    return () => {
      ends.delete(end);
      if (ends.size === 0 && this.held.get(credential) === ends) this.held.delete(credential);
    };
  }

  private endHeld(credential: string): void {
    const ends = this.held.get(credential);
    this.held.delete(credential);
    for (const end of ends ?? []) end();
  }

  /**
   * Creates an account. Every well-formed attempt from the address is counted (an email already
   * taken included: sign-up tells it, so the count bounds how fast emails can be tried).
   */
  async signup(email: string, password: string, clientAddress: string): Promise<Account> {
    const normalized = normalizeEmail(email);
    if (password.length < 8)
      throw new PaddockError(
        Errors.invalidRequest,
        invalidField("body.password", "must have at least 8 characters"),
      );
    await this.limits.chargeSignup(clientAddress);
    const existing = await this.db
      .selectFrom("accounts")
      .select("id")
      .where("email", "=", normalized)
      .executeTakeFirst();
    if (existing)
      throw new PaddockError(
        ControlPlaneErrors.emailTaken,
        `an account for ${normalized} already exists; log in instead`,
      );
    const account = {
      id: newId("acct"),
      email: normalized,
      plan: "free",
      created_at: new Date().toISOString(),
    };
    try {
      await this.db
        .insertInto("accounts")
        .values({ ...account, password_hash: await hashPassword(password) })
        .execute();
    } catch (error) {
      // Lost a race with a concurrent signup for the same email (unique index)? Else a real failure.
      const winner = await this.db
        .selectFrom("accounts")
        .select("id")
        .where("email", "=", normalized)
        .executeTakeFirst();
      if (!winner) throw error;
      throw new PaddockError(
        ControlPlaneErrors.emailTaken,
        `an account for ${normalized} already exists; log in instead`,
      );
    }
    return { id: account.id, email: account.email, plan: account.plan, createdAt: account.created_at };
  }

  async login(
    email: string,
    password: string,
    clientAddress: string,
  ): Promise<{ token: string; expiresAt: string; account: Account }> {
    const normalized = normalizeEmail(email);
    const row = await this.db
      .selectFrom("accounts")
      .selectAll()
      .where("email", "=", normalized)
      .executeTakeFirst();
    const attempt = await this.loginThrottle.begin(normalized, row?.id, clientAddress);
    // Verify against a dummy hash when the account is unknown, so timing does not reveal it.
    const valid = await verifyPassword(password, row?.password_hash ?? dummyHash);
    if (!row || !valid) throw new PaddockError(ControlPlaneErrors.invalidCredentials);
    await attempt.succeeded();
    const token = newSecret(sessionPrefix);
    const now = Date.now();
    const expiresAt = new Date(now + sessionLifetimeMs).toISOString();
    await this.db
      .insertInto("sessions")
      .values({
        token_hash: sha256(token),
        account_id: row.id,
        created_at: new Date(now).toISOString(),
        expires_at: expiresAt,
      })
      .execute();
    return {
      token,
      expiresAt,
      account: { id: row.id, email: row.email, plan: row.plan, createdAt: row.created_at },
    };
  }

  async logout(principal: Principal): Promise<void> {
    if (principal.via !== "session")
      throw new PaddockError(
        ControlPlaneErrors.sessionRequired,
        "log out with the session token, not an API key",
      );
    this.revocations++;
    await this.db.deleteFrom("sessions").where("token_hash", "=", principal.credential).execute();
    await this.forget(principal.credential);
  }

  async account(id: string): Promise<Account> {
    const row = await this.db
      .selectFrom("accounts")
      .select(["id", "email", "plan", "created_at"])
      .where("id", "=", id)
      .executeTakeFirst();
    if (!row) throw new PaddockError(Errors.unauthorized, "the account no longer exists");
    return { id: row.id, email: row.email, plan: row.plan, createdAt: row.created_at };
  }

  /**
   * Resolves `Authorization: Bearer <session token | API key>`. A credential seen in the last few
   * seconds is answered from memory (see CredentialCache); a key's last use is recorded when it
   * is looked up, so to within that much.
   */
  async authenticate(bearer: string | undefined): Promise<Principal> {
    if (!bearer)
      throw new PaddockError(Errors.unauthorized, "send `Authorization: Bearer <API key or session token>`");
    const hash = sha256(bearer);
    const nowMs = Date.now();
    const cached = this.recent.get(hash, nowMs);
    if (cached) return cached;
    const revocations = this.revocations;
    const remember = (principal: Principal, expiresAt: string | null) => {
      if (revocations === this.revocations) this.recent.set(hash, principal, expiresAt, nowMs);
      return principal;
    };
    const now = new Date(nowMs).toISOString();
    if (bearer.startsWith(sessionPrefix)) {
      const session = await this.db
        .selectFrom("sessions")
        .selectAll()
        .where("token_hash", "=", hash)
        .executeTakeFirst();
      if (!session || session.expires_at <= now)
        throw new PaddockError(Errors.unauthorized, "the session has ended; log in again");
      return remember(
        { accountId: session.account_id, via: "session", scope: null, credential: hash },
        session.expires_at,
      );
    }
    const key = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("secret_hash", "=", hash)
      .executeTakeFirst();
    if (!key) throw new PaddockError(Errors.unauthorized, "unknown API key");
    if (key.expires_at && key.expires_at <= now)
      throw new PaddockError(ControlPlaneErrors.keyExpired, `this API key expired at ${key.expires_at}`);
    await this.db.updateTable("api_keys").set({ last_used_at: now }).where("id", "=", key.id).execute();
    return remember(
      {
        accountId: key.account_id,
        via: "key",
        scope: (key.scope as Scope | null) ?? null,
        credential: key.id,
      },
      key.expires_at,
    );
  }

  async createKey(
    accountId: string,
    options: { name?: string; scope?: Scope; expiresAt?: string; format?: KeyFormat },
  ): Promise<{ key: ApiKey; secret: string }> {
    if (options.expiresAt && Date.parse(options.expiresAt) <= Date.now()) {
      throw new PaddockError(Errors.invalidRequest, invalidField("body.expiresAt", "must be in the future"));
    }
    const { plan, max } = await this.limits.apiKeyLimit(accountId);
    const secret = newKeySecret(options.format ?? "paddock");
    const row = {
      id: newId("key"),
      account_id: accountId,
      name: options.name ?? null,
      prefix: shownPrefix(secret),
      secret_hash: sha256(secret),
      scope: options.scope ?? null,
      created_at: new Date().toISOString(),
      expires_at: options.expiresAt ? new Date(options.expiresAt).toISOString() : null,
      last_used_at: null,
    };
    // Counted and written under a lock on the account: concurrent creates cannot pass the limit.
    await this.db.transaction().execute(async (trx) => {
      await lockWithin(trx, `api-keys:${accountId}`);
      const held = await trx
        .selectFrom("api_keys")
        .select((eb) => eb.fn.countAll<number | string>().as("count"))
        .where("account_id", "=", accountId)
        .executeTakeFirst();
      const count = Number(held?.count ?? 0);
      if (count >= max) {
        throw new PaddockError(
          Errors.quotaExceeded,
          `API key limit: the ${plan} plan allows ${max} API keys and this account has ${count}; delete one it no longer uses (DELETE /keys/{id}), or move to a larger plan`,
        );
      }
      await trx.insertInto("api_keys").values(row).execute();
    });
    return { key: toKey(row), secret };
  }

  async listKeys(accountId: string): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("created_at")
      .execute();
    return rows.map(toKey);
  }

  async deleteKey(accountId: string, id: string): Promise<void> {
    this.revocations++;
    const result = await this.db
      .deleteFrom("api_keys")
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    // Another account's key id is not this account's to revoke: its streams stay open.
    if (Number(result.numDeletedRows) === 0)
      throw new PaddockError(ControlPlaneErrors.keyNotFound, `no API key ${id}`);
    await this.forget(id);
  }

  /** A new secret for the key, in the same format; the old one stops working at once. */
  async rotateKey(accountId: string, id: string): Promise<{ key: ApiKey; secret: string }> {
    const current = await this.db
      .selectFrom("api_keys")
      .select("prefix")
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    if (!current) throw new PaddockError(ControlPlaneErrors.keyNotFound, `no API key ${id}`);
    const secret = newKeySecret(formatOf(current.prefix));
    this.revocations++;
    const result = await this.db
      .updateTable("api_keys")
      .set({ secret_hash: sha256(secret), prefix: shownPrefix(secret) })
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    await this.forget(id);
    if (Number(result.numUpdatedRows) === 0)
      throw new PaddockError(ControlPlaneErrors.keyNotFound, `no API key ${id}`);
    const row = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    return { key: toKey(row), secret };
  }
}

// A valid hash of a random password: logins for unknown emails cost the same as for known ones.
const dummyHash = await hashPassword(newSecret());

function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalized) || normalized.length > 254) {
    throw new PaddockError(
      Errors.invalidRequest,
      invalidField("body.email", `${JSON.stringify(email)} is not an email address`),
    );
  }
  return normalized;
}

function toKey(row: {
  id: string;
  name: string | null;
  prefix: string;
  scope: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scope: (row.scope as Scope | null) ?? null,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}
