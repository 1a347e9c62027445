import { Paginated, pageQueryFields } from "@paddock/common";
import { Type } from "@sinclair/typebox";
import { SecretInjection } from "../../secrets/schemas.js";
import { SandboxVolumes } from "../../volumes/schemas.js";
import { NetworkPolicy } from "./network-policy.js";

const strict = { additionalProperties: false } as const;
const Env = Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: 131071 }), {
  maxProperties: 512,
});
const Metadata = Type.Record(Type.String({ maxLength: 317 }), Type.String({ maxLength: 63 }), {
  maxProperties: 64,
});

export const CreateSandboxRequest = Type.Object(
  {
    template: Type.String({ minLength: 1, maxLength: 64, default: "python" }),
    timeout: Type.Optional(
      Type.Integer({ minimum: 1, description: "Seconds until the sandbox expires; omit for no expiry." }),
    ),
    env: Type.Optional(Env),
    metadata: Type.Optional(Metadata),
    networkPolicy: Type.Optional(NetworkPolicy),
    secrets: Type.Optional(SecretInjection),
    volumes: Type.Optional(SandboxVolumes),
  },
  strict,
);

export const Sandbox = Type.Object({
  id: Type.String(),
  state: Type.String(),
  template: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.String()),
  createdAt: Type.String(),
  expiresAt: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Optional(Type.String()),
});

export const SandboxParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

export const ListQuery = Type.Object(
  {
    state: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
    metadata: Type.Optional(Type.String({ maxLength: 4096 })),
    template: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "Only sandboxes created from this template." }),
    ),
    ...pageQueryFields,
  },
  strict,
);

export const SandboxList = Paginated(Sandbox);

export const RenewRequest = Type.Object(
  { timeout: Type.Integer({ minimum: 1, description: "New lifetime in seconds, counted from now." }) },
  strict,
);

export const MetadataPatch = Type.Record(
  Type.String({ maxLength: 317 }),
  Type.Unsafe<string | null>({ type: ["string", "null"], maxLength: 63 }),
  {
    maxProperties: 64,
  },
);

export const RunRequest = Type.Object(
  {
    command: Type.String({ minLength: 1, maxLength: 131072 }),
    cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    env: Type.Optional(Env),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 3600 * 1000 })),
    background: Type.Optional(Type.Boolean()),
  },
  strict,
);

export const RunResult = Type.Object({
  stdout: Type.String(),
  stderr: Type.String(),
  exitCode: Type.Integer(),
  truncated: Type.Optional(
    Type.Boolean({
      description:
        "True when stdout or stderr passed 8 MiB and the rest was dropped; use /run/stream for all of it.",
    }),
  ),
  oomKilled: Type.Optional(
    Type.Boolean({
      description:
        "True when the kernel killed the command for memory (exit code 137) and the sandbox lived on, as it can under runc; the stream's last event then has `error.ename` OutOfMemory. A sandbox killed whole for memory answers 409 `sandbox_oom_killed` instead.",
    }),
  ),
});

export const Template = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  version: Type.Optional(
    Type.String({ description: "What the template ships that `npm` does not pin, in words." }),
  ),
  npm: Type.Record(Type.String(), Type.String(), {
    description: "npm packages in the image, each at exactly this version (this template release's pins).",
  }),
  resourceLimits: Type.Record(Type.String(), Type.String(), {
    description: "Limits a create without resourceLimits gets (cpu, memory).",
  }),
  env: Type.Array(
    Type.Object({
      name: Type.String(),
      role: Type.Union([Type.Literal("credential"), Type.Literal("base-url"), Type.Literal("model")]),
      required: Type.Boolean(),
      description: Type.String(),
    }),
    { description: "Variables to pass in the create's env: provider credentials, base URLs, models." },
  ),
  ports: Type.Array(
    Type.Object({
      port: Type.Integer(),
      name: Type.String(),
      description: Type.String(),
      ready: Type.Boolean({ description: "The sandbox reports Running only once this port answers." }),
    }),
    { description: "Ports the template serves; reach them through GET /sandboxes/{id}/endpoints/{port}." },
  ),
});
export const TemplateList = Type.Object({ items: Type.Array(Template) });
