import { Paginated, pageQueryFields } from "@paddock/common";
import { Type } from "@sinclair/typebox";
import { SecretInjection } from "../../secrets/schemas.js";
import { NetworkPolicy } from "./network-policy.js";

const strict = { additionalProperties: false } as const;
const Env = Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: 131071 }), {
  maxProperties: 512,
});
const Metadata = Type.Record(Type.String({ maxLength: 317 }), Type.String({ maxLength: 63 }), {
  maxProperties: 64,
});

const OnTimeout = Type.Union([Type.Literal("kill"), Type.Literal("pause")], {
  description: "What happens when `timeout` passes: `kill` deletes the sandbox, `pause` pauses it.",
});
const IdleTimeout = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
  description: "Seconds without use after which the sandbox pauses; null: never.",
});
const MaxPaused = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
  description: "Seconds the sandbox may stay paused before it is deleted; null: kept.",
});
const lifecycleFlags = {
  processesKeepAwake: Type.Boolean({
    description: "A command, code execution or terminal that still runs in the sandbox counts as use.",
  }),
  autoResume: Type.Boolean({ description: "A call that needs the sandbox running resumes it first." }),
  keepMemory: Type.Boolean({
    description: "A pause to disk keeps processes and memory where the runtime can (see `memoryPreserved`).",
  }),
};

export const LifecycleRequest = Type.Object(
  {
    onTimeout: Type.Optional(OnTimeout),
    idleTimeout: Type.Optional(IdleTimeout),
    processesKeepAwake: Type.Optional(lifecycleFlags.processesKeepAwake),
    autoResume: Type.Optional(lifecycleFlags.autoResume),
    keepMemory: Type.Optional(lifecycleFlags.keepMemory),
    maxPaused: Type.Optional(MaxPaused),
  },
  {
    ...strict,
    description:
      "How the sandbox sleeps and wakes. Left out, `idleTimeout` and `maxPaused` take the account's plan defaults (GET /usage `plan.lifecycle`); `null` means never.",
  },
);

export const Lifecycle = Type.Object({
  onTimeout: OnTimeout,
  idleTimeout: IdleTimeout,
  ...lifecycleFlags,
  maxPaused: MaxPaused,
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
    lifecycle: Type.Optional(LifecycleRequest),
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
  lifecycle: Lifecycle,
  pausedTo: Type.Union([Type.Literal("memory"), Type.Literal("disk"), Type.Null()], {
    description: "Where the sandbox sleeps while Paused (and while Pausing on its way); null otherwise.",
  }),
  memoryPreserved: Type.Union([Type.Boolean(), Type.Null()], {
    description:
      "Paused to disk: true when a resume brings its processes and memory back, false when only its files (processes start anew); null unless on disk.",
  }),
  lastActivityAt: Type.Union([Type.String(), Type.Null()], {
    description: "The last time anything reached the sandbox through this server.",
  }),
  idleAt: Type.Union([Type.String(), Type.Null()], {
    description: "When the sandbox pauses for want of use unless used before; null: it never idles out.",
  }),
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

export const PauseRequest = Type.Object(
  {
    to: Type.Optional(
      Type.Union([Type.Literal("memory"), Type.Literal("disk")], {
        description:
          "`memory` (the default) freezes the sandbox in place; `disk` takes it off the host's memory.",
      }),
    ),
  },
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
