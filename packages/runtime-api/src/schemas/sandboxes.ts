import { Paginated, pageQueryFields } from "@paddock/common";
import { type Static, Type } from "@sinclair/typebox";
import { NullableInteger, NullableString, StringMap } from "./common.js";

const strict = { additionalProperties: false } as const;

export const ImageSpec = Type.Object(
  {
    uri: Type.String({ minLength: 1, maxLength: 1024 }),
    auth: Type.Optional(
      Type.Object(
        {
          username: Type.Optional(Type.String({ maxLength: 1024 })),
          password: Type.Optional(Type.String({ maxLength: 8192 })),
        },
        strict,
      ),
    ),
  },
  strict,
);

export const PlatformSpec = Type.Object(
  {
    os: Type.Union([Type.Literal("linux"), Type.Literal("windows")]),
    arch: Type.Union([Type.Literal("amd64"), Type.Literal("arm64")]),
  },
  strict,
);

export const NetworkRule = Type.Object(
  {
    action: Type.Union([Type.Literal("allow"), Type.Literal("deny")]),
    target: Type.String({ minLength: 1, maxLength: 253 }),
  },
  strict,
);

export const NetworkPolicy = Type.Object(
  {
    defaultAction: Type.Optional(Type.Union([Type.Literal("allow"), Type.Literal("deny")])),
    egress: Type.Optional(Type.Array(NetworkRule, { maxItems: 1000 })),
  },
  strict,
);

const dnsLabel = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

export const Volume = Type.Object(
  {
    name: Type.String({ pattern: dnsLabel, maxLength: 63 }),
    host: Type.Optional(Type.Object({ path: Type.String({ pattern: "^/", maxLength: 4096 }) }, strict)),
    pvc: Type.Optional(
      Type.Object(
        {
          claimName: Type.String({ pattern: dnsLabel, maxLength: 253 }),
          createIfNotExists: Type.Optional(Type.Boolean()),
          deleteOnSandboxTermination: Type.Optional(Type.Boolean()),
          storageClass: Type.Optional(NullableString()),
          storage: Type.Optional(NullableString({ pattern: "^\\d+(\\.\\d+)?(Ki|Mi|Gi|Ti|Pi|Ei)?$" })),
          accessModes: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
        },
        strict,
      ),
    ),
    ossfs: Type.Optional(Type.Object({}, { additionalProperties: true })),
    mountPath: Type.String({ pattern: "^/", maxLength: 4096 }),
    readOnly: Type.Optional(Type.Boolean()),
    subPath: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  strict,
);

export const CreateSandboxRequest = Type.Object({
  image: Type.Optional(ImageSpec),
  snapshotId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  platform: Type.Optional(PlatformSpec),
  timeout: Type.Optional(NullableInteger({ minimum: 1 })),
  resourceLimits: Type.Optional(StringMap({ maxProperties: 16, maxValueLength: 64 })),
  resourceRequests: Type.Optional(StringMap({ maxProperties: 16, maxValueLength: 64 })),
  // Per-item bounds; the runtime also bounds the totals (launchLimits).
  env: Type.Optional(StringMap({ maxProperties: 512, maxValueLength: 131071 })),
  metadata: Type.Optional(StringMap({ maxProperties: 64, maxValueLength: 63 })),
  entrypoint: Type.Optional(Type.Array(Type.String({ maxLength: 131071 }), { minItems: 1, maxItems: 1024 })),
  networkPolicy: Type.Optional(NetworkPolicy),
  credentialProxy: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()) }, strict)),
  secureAccess: Type.Optional(Type.Boolean()),
  volumes: Type.Optional(Type.Array(Volume, { maxItems: 32 })),
  extensions: Type.Optional(StringMap({ maxProperties: 64 })),
});
export type CreateSandboxRequest = Static<typeof CreateSandboxRequest>;

export const SandboxStatus = Type.Object({
  state: Type.String(),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  lastTransitionAt: Type.Optional(Type.String()),
});

const sandboxCore = {
  id: Type.String(),
  status: SandboxStatus,
  metadata: Type.Record(Type.String(), Type.String()),
  extensions: Type.Record(Type.String(), Type.String()),
  platform: Type.Optional(Type.Object({ os: Type.String(), arch: Type.String() })),
  entrypoint: Type.Array(Type.String()),
  expiresAt: Type.Optional(Type.String()),
  createdAt: Type.String(),
};

export const CreateSandboxResponse = Type.Object(sandboxCore);
export const Sandbox = Type.Object({
  ...sandboxCore,
  image: Type.Optional(Type.Object({ uri: Type.String() })),
  snapshotId: Type.Optional(Type.String()),
});
export type Sandbox = Static<typeof Sandbox>;

export const SandboxParams = Type.Object({ sandboxId: Type.String({ minLength: 1, maxLength: 128 }) });

export const ListSandboxesQuery = Type.Object(
  {
    state: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
    metadata: Type.Optional(Type.String({ maxLength: 4096 })),
    ...pageQueryFields,
  },
  strict,
);
export const ListSandboxesResponse = Paginated(Sandbox);

export const PatchMetadataRequest = Type.Record(
  Type.String({ maxLength: 317 }),
  NullableString({ maxLength: 63 }),
  {
    maxProperties: 64,
  },
);

export const RenewRequest = Type.Object({ expiresAt: Type.String({ format: "date-time" }) }, strict);
export const RenewResponse = Type.Object({ expiresAt: Type.String() }, strict);

export const EndpointParams = Type.Object({
  sandboxId: Type.String({ minLength: 1, maxLength: 128 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
});
export const EndpointQuery = Type.Object(
  {
    use_server_proxy: Type.Optional(Type.Boolean({ default: false })),
    expires: Type.Optional(Type.String({ pattern: "^(0|[1-9][0-9]*)$", minLength: 1, maxLength: 20 })),
  },
  strict,
);
export const Endpoint = Type.Object(
  { endpoint: Type.String(), headers: Type.Optional(Type.Record(Type.String(), Type.String())) },
  strict,
);
