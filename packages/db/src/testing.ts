import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type DatabaseHandle, openDatabase } from "./connect.js";

/**
 * The PostgreSQL server the suite runs against (`make test` starts it; see scripts/test-postgres.sh).
 * Fails loudly on a URL that picked up stray output from the script that printed it.
 */
function testPostgresUrl(): string {
  const url =
    process.env.PADDOCK_TEST_DATABASE_URL ?? "postgres://paddock:paddock@127.0.0.1:5432/paddock_test";
  if (!/^postgres(ql)?:\/\/\S+$/.test(url))
    throw new Error(`PADDOCK_TEST_DATABASE_URL is not a single postgres:// URL: ${JSON.stringify(url)}`);
  return url;
}

export type TestEngine = "sqlite" | "postgres";
export const testEngines: TestEngine[] = ["sqlite", "postgres"];

/**
 * A fresh, empty database of the given engine: a SQLite file in a temp dir, or a new
 * PostgreSQL database created on the test server. `drop()` removes it.
 */
export async function createTestDatabase(
  engine: TestEngine,
): Promise<{ url: string; open: () => Promise<DatabaseHandle>; drop: () => Promise<void> }> {
  if (engine === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "paddock-db-"));
    const url = `sqlite:${join(dir, "paddock.db")}`;
    return {
      url,
      open: () => openDatabase(url),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const serverUrl = testPostgresUrl();
  const name = `paddock_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    open: () => openDatabase(url.toString()),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
