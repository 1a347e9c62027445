import { newId, PaddockError, type Page, pageOf } from "@paddock/common";
import type { Db } from "@paddock/db";
import { PostgresAdapter, sql } from "kysely";
import { ControlPlaneErrors } from "../http/errors.js";
import {
  fts5Query,
  highlightEnd,
  highlightStart,
  renderSnippet,
  searchTerms,
  tsQuery,
} from "./memory-query.js";

export const maxContentBytes = 64 * 1024;
export const maxMetadataBytes = 16 * 1024;

export interface MemoryEntry {
  id: string;
  content: string;
  metadata: Record<string, unknown>;
  tags: string[];
  createdAt: string;
}

export interface MemoryHit extends MemoryEntry {
  score: number;
  snippet: string;
}

interface MemoryRow {
  id: string;
  content: string;
  metadata: string;
  tags: string;
  created_at: string;
}

/**
 * An account's memory: text that outlives sandboxes, listed newest first and searched by
 * relevance (FTS5 on SQLite, tsvector on PostgreSQL). Every query is bound to one account.
 */
export class MemoryStore {
  constructor(private readonly db: Db) {}

  async add(
    accountId: string,
    input: { content: string; metadata?: Record<string, unknown>; tags?: string[] },
  ): Promise<MemoryEntry> {
    if (Buffer.byteLength(input.content, "utf8") > maxContentBytes) {
      throw new PaddockError(
        ControlPlaneErrors.memoryTooLarge,
        `content is over ${maxContentBytes} bytes; split it into several entries`,
      );
    }
    const metadata = JSON.stringify(input.metadata ?? {});
    if (Buffer.byteLength(metadata, "utf8") > maxMetadataBytes) {
      throw new PaddockError(
        ControlPlaneErrors.memoryTooLarge,
        `metadata is over ${maxMetadataBytes} bytes as JSON; keep large data in content`,
      );
    }
    const tags = [...new Set(input.tags ?? [])];
    const entry: MemoryEntry = {
      id: newId("mem"),
      content: input.content,
      metadata: input.metadata ?? {},
      tags,
      createdAt: new Date().toISOString(),
    };
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("memories")
        .values({
          id: entry.id,
          account_id: accountId,
          content: entry.content,
          metadata,
          tags: JSON.stringify(tags),
          created_at: entry.createdAt,
        })
        .execute();
      if (tags.length > 0) {
        await trx
          .insertInto("memory_tags")
          .values(tags.map((tag) => ({ memory_id: entry.id, account_id: accountId, tag })))
          .execute();
      }
    });
    return entry;
  }

  async list(
    accountId: string,
    options: { tag?: string; page?: number; pageSize?: number } = {},
  ): Promise<Page<MemoryEntry>> {
    const page = options.page ?? 1;
    const pageSize = options.pageSize ?? 20;
    let query = this.db.selectFrom("memories").where("memories.account_id", "=", accountId);
    if (options.tag) {
      const tag = options.tag;
      query = query.where(({ exists, selectFrom }) =>
        exists(
          selectFrom("memory_tags")
            .select("memory_tags.tag")
            .whereRef("memory_tags.memory_id", "=", "memories.id")
            .where("memory_tags.tag", "=", tag),
        ),
      );
    }
    const { total } = await query
      .select((eb) => eb.fn.countAll<number | string>().as("total"))
      .executeTakeFirstOrThrow();
    const rows = await query
      .select(["id", "content", "metadata", "tags", "created_at"])
      .orderBy("created_at", "desc")
      .orderBy("seq", "desc")
      .limit(pageSize)
      .offset((page - 1) * pageSize)
      .execute();
    return { items: rows.map(toEntry), pagination: pageOf(page, pageSize, Number(total)) };
  }

  async delete(accountId: string, id: string): Promise<void> {
    const deleted = await this.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom("memories")
        .where("id", "=", id)
        .where("account_id", "=", accountId)
        .executeTakeFirst();
      await trx
        .deleteFrom("memory_tags")
        .where("memory_id", "=", id)
        .where("account_id", "=", accountId)
        .execute();
      return Number(result.numDeletedRows);
    });
    if (deleted === 0) throw new PaddockError(ControlPlaneErrors.memoryNotFound, `no memory entry ${id}`);
  }

  /**
   * The account's entries matching any word of `text`, best first, each with a score and a
   * highlighted snippet. Text without a single word matches nothing.
   */
  async search(
    accountId: string,
    text: string,
    options: { tag?: string; limit?: number } = {},
  ): Promise<MemoryHit[]> {
    const terms = searchTerms(text);
    if (terms.length === 0) return [];
    const limit = options.limit ?? 10;
    const tagFilter = options.tag
      ? sql`and exists (select 1 from memory_tags t where t.memory_id = m.id and t.tag = ${options.tag})`
      : sql.raw("");
    const columns = sql`m.id, m.content, m.metadata, m.tags, m.created_at`;
    const query = this.isPostgres()
      ? sql<MemoryRow & { score: number; snippet: string }>`
          select ${columns}, ts_rank(m.search, q, 1) as score,
            ts_headline('english', m.content, q, ${headlineOptions}) as snippet
          from memories m, to_tsquery('english', ${tsQuery(terms)}) q
          where m.account_id = ${accountId} and m.search @@ q ${tagFilter}
          order by score desc, m.created_at desc, m.seq desc
          limit ${limit}`
      : sql<MemoryRow & { score: number; snippet: string }>`
          select ${columns}, -bm25(memories_fts) as score,
            snippet(memories_fts, 0, ${highlightStart}, ${highlightEnd}, '…', 32) as snippet
          from memories_fts join memories m on m.seq = memories_fts.rowid
          where memories_fts match ${fts5Query(terms)} and m.account_id = ${accountId} ${tagFilter}
          order by bm25(memories_fts), m.created_at desc, m.seq desc
          limit ${limit}`;
    const { rows } = await query.execute(this.db);
    return rows.map((row) => ({
      ...toEntry(row),
      score: Number(row.score),
      snippet: renderSnippet(row.snippet),
    }));
  }

  private isPostgres(): boolean {
    return this.db.getExecutor().adapter instanceof PostgresAdapter;
  }
}

// ts_headline's counterpart of FTS5's snippet(): about the same excerpt length, same markers.
const headlineOptions = `StartSel=${highlightStart}, StopSel=${highlightEnd}, MaxWords=32, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`;

function toEntry(row: MemoryRow): MemoryEntry {
  return {
    id: row.id,
    content: row.content,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    tags: JSON.parse(row.tags) as string[],
    createdAt: row.created_at,
  };
}
