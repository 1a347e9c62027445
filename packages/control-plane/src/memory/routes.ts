import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { deletedResponses, ErrorBody, errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import type { MemoryStore } from "./memory-store.js";
import {
  AddMemoryRequest,
  MemoryEntry,
  MemoryList,
  MemoryListQuery,
  MemoryParams,
  MemorySearchQuery,
  MemorySearchResult,
} from "./schemas.js";

/** Memory: the account's text that outlives sandboxes, listed and searched by relevance. */
export const memoryRoutes: FastifyPluginAsyncTypebox<{ identity: Identity; memory: MemoryStore }> = async (
  app,
  { identity, memory },
) => {
  app.addHook("onRequest", authenticate(identity, "memory"));

  app.post(
    "/memory",
    {
      schema: {
        tags: ["memory"],
        body: AddMemoryRequest,
        response: { 201: MemoryEntry, ...errorResponses, 413: ErrorBody },
      },
    },
    async (request, reply) => {
      const { content, metadata, tags } = request.body;
      const entry = await memory.add(principalOf(request).accountId, {
        content,
        ...(metadata ? { metadata } : {}),
        ...(tags ? { tags } : {}),
      });
      return reply.status(201).send(entry);
    },
  );

  app.get(
    "/memory",
    {
      schema: {
        tags: ["memory"],
        description: "The account's entries, newest first; `tag` keeps those carrying it.",
        querystring: MemoryListQuery,
        response: { 200: MemoryList, ...errorResponses },
      },
    },
    async (request) => {
      const { tag, page, pageSize } = request.query;
      return memory.list(principalOf(request).accountId, {
        ...(tag ? { tag } : {}),
        ...(page ? { page } : {}),
        ...(pageSize ? { pageSize } : {}),
      });
    },
  );

  app.get(
    "/memory/search",
    {
      schema: {
        tags: ["memory"],
        description: "Entries matching the words of `q`, most relevant first, with highlighted snippets.",
        querystring: MemorySearchQuery,
        response: { 200: MemorySearchResult, ...errorResponses },
      },
    },
    async (request) => {
      const { q, tag, limit } = request.query;
      return {
        items: await memory.search(principalOf(request).accountId, q, {
          ...(tag ? { tag } : {}),
          ...(limit ? { limit } : {}),
        }),
      };
    },
  );

  app.delete(
    "/memory/:id",
    { schema: { tags: ["memory"], params: MemoryParams, response: deletedResponses } },
    async (request, reply) => {
      await memory.delete(principalOf(request).accountId, request.params.id);
      return reply.status(204).send(undefined as never);
    },
  );
};
