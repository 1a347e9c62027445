import { PaddockError } from "@paddock/common";
import type { Db } from "@paddock/db";
import { ControlPlaneErrors } from "../http/errors.js";
import { SealedBox } from "./sealed-box.js";

export const maxSecretBytes = 64 * 1024;

export interface SecretInfo {
  name: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * An account's secrets: values sealed at rest (bound to account and name), readable only by the
 * server when it injects them into a sandbox. Nothing here returns a value to a caller.
 */
export class SecretStore {
  readonly #box: SealedBox;

  constructor(
    private readonly db: Db,
    serverSecretKey: string,
  ) {
    this.#box = new SealedBox(serverSecretKey);
  }

  /** Creates the secret or replaces its value (createdAt kept, updatedAt moved). */
  async set(
    accountId: string,
    name: string,
    value: string,
  ): Promise<{ secret: SecretInfo; created: boolean }> {
    if (Buffer.byteLength(value, "utf8") > maxSecretBytes) {
      throw new PaddockError(
        ControlPlaneErrors.secretTooLarge,
        `the value of ${name} is over ${maxSecretBytes} bytes; store a smaller value (or a reference to it)`,
      );
    }
    const now = new Date().toISOString();
    const sealed = this.#box.seal(value, context(accountId, name));
    const row = await this.db
      .insertInto("secrets")
      .values({ account_id: accountId, name, sealed_value: sealed, created_at: now, updated_at: now })
      .onConflict((conflict) =>
        conflict.columns(["account_id", "name"]).doUpdateSet({ sealed_value: sealed, updated_at: now }),
      )
      .returning(["name", "created_at", "updated_at"])
      .executeTakeFirstOrThrow();
    return { secret: toInfo(row), created: row.created_at === now };
  }

  async list(accountId: string): Promise<SecretInfo[]> {
    const rows = await this.db
      .selectFrom("secrets")
      .select(["name", "created_at", "updated_at"])
      .where("account_id", "=", accountId)
      .orderBy("name")
      .execute();
    return rows.map(toInfo);
  }

  async delete(accountId: string, name: string): Promise<void> {
    const result = await this.db
      .deleteFrom("secrets")
      .where("account_id", "=", accountId)
      .where("name", "=", name)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0)
      throw new PaddockError(ControlPlaneErrors.secretNotFound, `no secret named ${name}`);
  }

  /**
   * The environment a sandbox gets from `{ENV_NAME: SECRET_NAME}`: every name must exist, else
   * `unknown_secret` names the missing ones.
   */
  async resolve(accountId: string, injection: Record<string, string>): Promise<Record<string, string>> {
    const wanted = [...new Set(Object.values(injection))];
    if (wanted.length === 0) return {};
    const rows = await this.db
      .selectFrom("secrets")
      .select(["name", "sealed_value"])
      .where("account_id", "=", accountId)
      .where("name", "in", wanted)
      .execute();
    const sealed = new Map(rows.map((row) => [row.name, row.sealed_value]));
    const missing = wanted.filter((name) => !sealed.has(name));
    if (missing.length > 0) {
      throw new PaddockError(
        ControlPlaneErrors.unknownSecret,
        `no secret named ${missing.join(", ")}; GET /secrets lists the names this account has`,
      );
    }
    const env: Record<string, string> = {};
    for (const [variable, name] of Object.entries(injection)) {
      env[variable] = this.#box.open(sealed.get(name) as string, context(accountId, name));
    }
    return env;
  }
}

/** Binds a sealed value to its row: copied to another name or account, it does not open. */
function context(accountId: string, name: string): string {
  return `secret:${accountId}:${name}`;
}

function toInfo(row: { name: string; created_at: string; updated_at: string }): SecretInfo {
  return { name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}
