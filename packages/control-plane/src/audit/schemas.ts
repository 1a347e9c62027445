import { Type } from "@sinclair/typebox";

export const AuditQuery = Type.Object(
  {
    type: Type.Optional(
      Type.String({
        pattern: "^[a-z][a-z_]*(\\.[a-z_]+)*\\.?$",
        maxLength: 64,
        description:
          "An event type (`key.created`); one ending in `.` (`key.`) matches every type it begins.",
      }),
    ),
    since: Type.Optional(Type.String({ format: "date-time", description: "Events at or after (RFC 3339)." })),
    until: Type.Optional(Type.String({ format: "date-time", description: "Events before (RFC 3339)." })),
    target: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: "Only events about this id or name." }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(
      Type.String({ pattern: "^[0-9]{1,15}$", description: "`nextCursor` of the page before." }),
    ),
  },
  { additionalProperties: false },
);

const nullableString = Type.Union([Type.String(), Type.Null()]);

export const AuditEvent = Type.Object({
  id: Type.String(),
  at: Type.String(),
  type: Type.String({ description: "Dotted and stable: `key.created`, `sandbox.deleted`, `limit.hit`, …" }),
  actor: Type.Object({
    kind: Type.String({ description: "session, key, password, anonymous, system or billing." }),
    id: nullableString,
    name: nullableString,
    address: Type.Union([Type.String(), Type.Null()], { description: "The client address of the request." }),
  }),
  target: Type.Union([
    Type.Object({ type: Type.String(), id: nullableString, name: nullableString }),
    Type.Null(),
  ]),
  details: Type.Record(Type.String(), Type.Unknown()),
});

export const AuditPage = Type.Object({
  items: Type.Array(AuditEvent),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: "`cursor` for the next (older) page; null after the last.",
  }),
});
