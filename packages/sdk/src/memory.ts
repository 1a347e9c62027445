import type { RequestOptions, Transport } from "./transport.js";
import type { MemoryEntry, MemoryList, MemorySearchHit } from "./types.js";
import { encodePart, queryOf } from "./url.js";

export interface AddMemoryOptions extends RequestOptions {
  metadata?: Record<string, unknown>;
  tags?: string[];
}

/** `client.memory`: text that outlives sandboxes, listed newest first and searched by relevance. */
export class Memory {
  constructor(private readonly transport: Transport) {}

  add(content: string, options: AddMemoryOptions = {}): Promise<MemoryEntry> {
    const { metadata, tags, ...request } = options;
    return this.transport.json(
      "POST",
      "/memory",
      { content, ...(metadata ? { metadata } : {}), ...(tags ? { tags } : {}) },
      request,
    );
  }

  /** One page of entries, newest first; `tag` keeps those carrying it. */
  list(
    options: RequestOptions & { tag?: string; page?: number; pageSize?: number } = {},
  ): Promise<MemoryList> {
    const { tag, page, pageSize, ...request } = options;
    return this.transport.json("GET", `/memory${queryOf({ tag, page, pageSize })}`, undefined, request);
  }

  /** Entries matching the words of `query`, best first, each with a `score` and an HTML `snippet`. */
  async search(
    query: string,
    options: RequestOptions & { tag?: string; limit?: number } = {},
  ): Promise<MemorySearchHit[]> {
    const { tag, limit, ...request } = options;
    const path = `/memory/search${queryOf({ q: query, tag, limit })}`;
    return (await this.transport.json<{ items: MemorySearchHit[] }>("GET", path, undefined, request)).items;
  }

  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.fetch("DELETE", `/memory/${encodePart(id)}`, undefined, options);
  }
}
