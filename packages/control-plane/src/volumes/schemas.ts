import { Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;

// Names and sizes are checked by the registry, which answers `invalid_volume_name` and
// `invalid_volume_size` the same on every surface.
const VolumeName = Type.String({
  maxLength: 256,
  description: "1 to 63 letters, digits, `_` and `-`; unique in the account.",
});

export const CreateVolumeRequest = Type.Object(
  {
    name: VolumeName,
    size: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "Most bytes the volume holds, like \"1Gi\"; from 16Mi to the operator's `[volumes] max_size`, default `[volumes] default_size`. Counts against the plan's disk.",
      }),
    ),
  },
  strict,
);

export const Volume = Type.Object({
  id: Type.String(),
  name: Type.String(),
  sizeBytes: Type.Integer(),
  createdAt: Type.String(),
});

export const VolumeList = Type.Object({ items: Type.Array(Volume) });
export const VolumeParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

/** On sandbox create: the account's volumes to mount. */
export const SandboxVolumes = Type.Array(
  Type.Object(
    {
      volume: Type.String({ maxLength: 256, description: "The name of one of the account's volumes." }),
      mountPath: Type.String({
        pattern: "^/.",
        maxLength: 4096,
        description: "Absolute path in the sandbox, not / itself.",
      }),
      readOnly: Type.Optional(
        Type.Boolean({ description: "Read-only by the host's enforcement: the sandbox cannot remount it." }),
      ),
      subPath: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          description: "A directory inside the volume to mount instead of its root; made when missing.",
        }),
      ),
    },
    strict,
  ),
  {
    maxItems: 16,
    description: "Volumes mounted into the sandbox; files on them outlive it.",
  },
);
