import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { migrate } from "./migrations.js";
import type { Database } from "./schema.js";

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  engine: "sqlite" | "postgres";
  /** Where it lives, with any password removed (safe to log). */
  location: string;
  /** The URL it was opened with, password included: for more connections, never for logs. */
  url: string;
  close(): Promise<void>;
}

/**
 * Opens the database named by `url` and brings its schema up to date.
 * `postgres://…` / `postgresql://…` → PostgreSQL; `sqlite:<path>` or a bare path → SQLite file.
 */
export async function openDatabase(url: string): Promise<DatabaseHandle> {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    // PostgreSQL ends connections on its own (a restart, a failover, an administrator): the pool
    // drops such a client and the next query opens another. Unheard, the error would end the
    // process; a client the pool is closing has no listener left, so each keeps its own.
    pool.on("error", () => undefined);
    pool.on("connect", (client) => client.on("error", () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await migrate(db as Kysely<unknown>, "postgres");
    return { db, engine: "postgres", location: redact(url), url, close: () => db.destroy() };
  }
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  if (path !== ":memory:") createPrivately(resolve(path));
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("busy_timeout = 5000");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db as Kysely<unknown>, "sqlite");
  return { db, engine: "sqlite", location: path, url, close: () => db.destroy() };
}

/**
 * The database holds account data: its directory is made 0700 and its file 0600 before SQLite
 * opens it. SQLite gives the -wal and -shm files it creates the main file's mode; a file made by
 * an older version with looser bits is tightened.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres";
  }
}
