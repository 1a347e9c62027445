import { type Static, Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;
const Path = Type.String({ minLength: 1, maxLength: 4096 });
const Encoding = Type.Union([Type.Literal("utf8"), Type.Literal("base64")], { default: "utf8" });

export const ReadRequest = Type.Object({ path: Path, encoding: Type.Optional(Encoding) }, strict);
export const ReadResult = Type.Object({
  path: Type.String(),
  content: Type.String(),
  encoding: Type.String(),
  size: Type.Integer(),
});
export const WriteRequest = Type.Object(
  {
    path: Path,
    content: Type.String({
      maxLength: 16 * 2 ** 20,
      description: "At most 16 MiB of text here; send larger files as a raw `application/octet-stream` body.",
    }),
    encoding: Type.Optional(Encoding),
    mode: Type.Optional(Type.Integer({ minimum: 0, maximum: 7777 })),
  },
  strict,
);
export type WriteRequest = Static<typeof WriteRequest>;
export const WriteQuery = Type.Object(
  {
    path: Type.Optional(Path),
    mode: Type.Optional(Type.Integer({ minimum: 0, maximum: 7777 })),
  },
  { ...strict, description: "For a raw `application/octet-stream` body: where to write it." },
);
/** Raw file bytes (`application/octet-stream`). */
export const RawBytes = Type.Unsafe<Buffer>({ type: "string", format: "binary" });
/** A raw request body: streamed through unread, so the schema only documents it (OpenAPI 3.1 style). */
export const RawBody = Type.Unsafe<unknown>({ description: "The file's raw bytes." });
export const WriteResult = Type.Object({ path: Type.String(), size: Type.Integer() });
export const MoveRequest = Type.Object({ from: Path, to: Path }, strict);
export const SearchRequest = Type.Object(
  { path: Path, pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })) },
  strict,
);
export const ListQuery = Type.Object(
  { path: Path, depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 32, default: 1 })) },
  strict,
);
export const DeleteQuery = Type.Object(
  { path: Path, recursive: Type.Optional(Type.Boolean({ default: false })) },
  strict,
);
export const MkdirRequest = Type.Object(
  { path: Path, mode: Type.Optional(Type.Integer({ minimum: 0, maximum: 7777 })) },
  strict,
);
export const UploadQuery = Type.Object(
  { path: Path, mode: Type.Optional(Type.Integer({ minimum: 0, maximum: 7777 })) },
  strict,
);
export const DownloadQuery = Type.Object({ path: Path }, strict);

export const FileInfo = Type.Object({
  path: Type.String(),
  type: Type.String(),
  size: Type.Integer(),
  mode: Type.Integer(),
  owner: Type.String(),
  group: Type.String(),
  modified_at: Type.String(),
});
export const FileList = Type.Object({ items: Type.Array(FileInfo) });

export const CodeRequest = Type.Object(
  {
    code: Type.String({ maxLength: 2 ** 20 }),
    language: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    contextId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  strict,
);
export const CodeResult = Type.Object({
  stdout: Type.String(),
  stderr: Type.String(),
  results: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  error: Type.Union([
    Type.Object({ name: Type.String(), value: Type.String(), traceback: Type.Array(Type.String()) }),
    Type.Null(),
  ]),
  executionCount: Type.Union([Type.Integer(), Type.Null()]),
  truncated: Type.Optional(
    Type.Boolean({
      description: "True when stdout, stderr or the results passed 8 MiB and the rest was dropped.",
    }),
  ),
});
export const ContextRequest = Type.Object(
  { language: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })) },
  strict,
);
export const Context = Type.Object({ id: Type.String(), language: Type.String() });
