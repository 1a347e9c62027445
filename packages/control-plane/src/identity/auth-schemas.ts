import { type Static, Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;

export const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  strict,
);
export type Credentials = Static<typeof Credentials>;

export const Account = Type.Object({
  id: Type.String(),
  email: Type.String(),
  plan: Type.String(),
  createdAt: Type.String(),
});
export const Session = Type.Object({ token: Type.String(), expiresAt: Type.String(), account: Account });
