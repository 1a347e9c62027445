import { Paginated, pageQueryFields } from "@paddock/common";
import { Type } from "@sinclair/typebox";

export const CreateSnapshotRequest = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })) },
  { additionalProperties: false },
);

export const Snapshot = Type.Object({
  id: Type.String(),
  sandboxId: Type.String(),
  name: Type.Optional(Type.String()),
  status: Type.Object({
    state: Type.String(),
    reason: Type.Optional(Type.String()),
    message: Type.Optional(Type.String()),
    lastTransitionAt: Type.Optional(Type.String()),
  }),
  createdAt: Type.String(),
});

export const SnapshotParams = Type.Object({ snapshotId: Type.String({ minLength: 1, maxLength: 128 }) });

export const ListSnapshotsQuery = Type.Object(
  {
    sandboxId: Type.Optional(Type.String({ maxLength: 128 })),
    name: Type.Optional(Type.String({ maxLength: 253 })),
    state: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 })),
    ...pageQueryFields,
  },
  { additionalProperties: false },
);
export const ListSnapshotsResponse = Paginated(Snapshot);
