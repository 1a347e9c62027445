import { Type } from "@sinclair/typebox";

export const Scope = Type.Union([Type.Literal("sandboxes"), Type.Literal("memory"), Type.Literal("secrets")]);

export const CreateKeyRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    scope: Type.Optional(Scope),
    expiresAt: Type.Optional(Type.String({ format: "date-time" })),
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
