import { Paginated, pageQueryFields } from "@paddock/common";
import { Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;

export const Tag = Type.String({
  pattern: "^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$",
  description: "Letters, digits and `_ . : / -`, starting with a letter or digit; at most 64 characters.",
});

const Metadata = Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.Unknown(), {
  maxProperties: 64,
  description: "Any JSON object, at most 64 keys and 16 KiB serialized.",
});

export const AddMemoryRequest = Type.Object(
  {
    content: Type.String({
      minLength: 1,
      pattern: "\\S",
      description: "The text to remember and search; at most 64 KiB (UTF-8).",
    }),
    metadata: Type.Optional(Metadata),
    tags: Type.Optional(Type.Array(Tag, { maxItems: 32, description: "At most 32; duplicates dropped." })),
  },
  strict,
);

export const MemoryEntry = Type.Object({
  id: Type.String(),
  content: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  tags: Type.Array(Type.String()),
  createdAt: Type.String(),
});

export const MemoryListQuery = Type.Object(
  {
    tag: Type.Optional(Tag),
    ...pageQueryFields,
  },
  strict,
);

export const MemoryList = Paginated(MemoryEntry);

export const MemorySearchQuery = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: "\\S",
      description:
        "Plain text; its words are matched (any of them, stemmed), best matches first. Operators and quotes are treated as spaces.",
    }),
    tag: Type.Optional(Tag),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  },
  strict,
);

export const MemorySearchHit = Type.Composite([
  MemoryEntry,
  Type.Object({
    score: Type.Number({
      description: "Relevance, higher is better; comparable within one answer, not across engines.",
    }),
    snippet: Type.String({
      description: "HTML-escaped excerpt of the content with the matched words in `<mark>`…`</mark>`.",
    }),
  }),
]);

export const MemorySearchResult = Type.Object({ items: Type.Array(MemorySearchHit) });
export const MemoryParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
