import { Type } from "@sinclair/typebox";

export const Scope = Type.Union([Type.Literal("sandboxes"), Type.Literal("memory"), Type.Literal("secrets")]);

export const CreateKeyRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    scope: Type.Optional(Scope),
    expiresAt: Type.Optional(Type.String({ format: "date-time" })),
    format: Type.Optional(
      Type.Union([Type.Literal("paddock"), Type.Literal("e2b")], {
        description:
          "The secret's shape: `paddock` (`pk_…`, the default) or `e2b` (`e2b_` and 40 hex digits, as E2B's SDKs expect). Either is the same kind of key, on every surface.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.String(),
  scope: Type.Union([Scope, Type.Null()]),
  createdAt: Type.String(),
  expiresAt: Type.Union([Type.String(), Type.Null()]),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
});

/** The only response that ever carries a key's secret: creation and rotation. */
export const ApiKeyWithSecret = Type.Object({ key: ApiKey, secret: Type.String() });
export const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
