import type { PaddockError } from "@paddock/common";
import type { Database, Db } from "@paddock/db";
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";

/** The tables that hold at most one row per account, keyed by its id. */
type AccountKeyed = "payment_agent_keys" | "payment_credentials";
type Row<T extends AccountKeyed> = Selectable<Database[T]>;

/**
 * One row per account in `table`: `put` replaces the account's row, `get` and `remove` refuse
 * with `notFound` when it has none. The payments agent key and the account's Stripe key are
 * both kept this way.
 */
export class AccountRows<T extends AccountKeyed> {
  /** The table seen by its key alone: Kysely cannot follow a table name that is a type parameter. */
  readonly #rows: Kysely<Record<string, { account_id: string }>>;
  readonly #table: string;

  constructor(
    db: Db,
    table: T,
    private readonly notFound: () => PaddockError,
  ) {
    this.#rows = db as unknown as Kysely<Record<string, { account_id: string }>>;
    this.#table = table;
  }

  /** Inserts `created` (the first values) or, when the account has a row, sets `changed` on it. */
  async put(
    accountId: string,
    created: Omit<Insertable<Database[T]>, "account_id">,
    changed: Updateable<Database[T]>,
  ): Promise<Row<T>> {
    const saved = await this.#rows
      .insertInto(this.#table)
      .values({ account_id: accountId, ...created })
      .onConflict((conflict) => conflict.column("account_id").doUpdateSet(changed as { account_id?: string }))
      .returningAll()
      .executeTakeFirstOrThrow();
    return saved as unknown as Row<T>;
  }

  /** The account's row; `missing` answers when there is none. */
  async get(accountId: string, missing = this.notFound): Promise<Row<T>> {
    const row = await this.#rows
      .selectFrom(this.#table)
      .selectAll()
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    if (!row) throw missing();
    return row as unknown as Row<T>;
  }

  async remove(accountId: string): Promise<void> {
    const result = await this.#rows
      .deleteFrom(this.#table)
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw this.notFound();
  }
}
