import { Type } from "@sinclair/typebox";

export const DiagnosticParams = Type.Object({
  sandboxId: Type.String({ minLength: 1, maxLength: 128 }),
  kind: Type.Union([Type.Literal("logs"), Type.Literal("events")]),
});

export const DiagnosticQuery = Type.Object(
  { scope: Type.String({ minLength: 1, maxLength: 32 }) },
  { additionalProperties: false },
);

export const DiagnosticContentQuery = Type.Object(
  {
    scope: Type.String({ minLength: 1, maxLength: 32 }),
    expires: Type.Integer({ minimum: 0 }),
    signature: Type.String({ minLength: 1, maxLength: 128 }),
  },
  { additionalProperties: false },
);

export const DiagnosticContent = Type.Object({
  sandboxId: Type.String(),
  kind: Type.String(),
  scope: Type.String(),
  delivery: Type.Union([Type.Literal("inline"), Type.Literal("url")]),
  contentType: Type.String(),
  content: Type.Optional(Type.String()),
  contentUrl: Type.Optional(Type.String()),
  contentLength: Type.Optional(Type.Integer()),
  expiresAt: Type.Optional(Type.String()),
  truncated: Type.Boolean(),
});
