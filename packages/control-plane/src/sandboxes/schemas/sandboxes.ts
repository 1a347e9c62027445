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

const OnTimeout = Type.Union([Type.Literal("kill"), Type.Literal("pause")], {
  description:
    "What happens when `timeout` passes: `kill` deletes the sandbox, `pause` pauses it (a resume gives it the same timeout again, from then).",
});
const idleTimeoutText =
  "Seconds without use after which the sandbox pauses; null: never. Omitted on create: the plan's (`GET /usage`, `plan.lifecycle`).";
const maxPausedText =
  "Seconds the sandbox may stay paused before it is deleted; null: kept. Omitted on create: the plan's.";
const processesKeepAwakeText = "A command, code execution or terminal that still runs counts as use.";
const autoResumeText =
  "A call that needs the sandbox running (a command, a file, an endpoint) resumes it first.";
const keepMemoryText = "A pause to disk keeps processes and memory where the runtime can.";

/** The lifecycle a create may ask for (decision 0190); what it leaves out comes from the plan or the defaults. */
export const LifecycleRequest = Type.Object(
  {
    onTimeout: Type.Optional(OnTimeout),
    idleTimeout: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: idleTimeoutText }),
    ),
    processesKeepAwake: Type.Optional(Type.Boolean({ description: processesKeepAwakeText })),
    autoResume: Type.Optional(Type.Boolean({ description: autoResumeText })),
    keepMemory: Type.Optional(Type.Boolean({ description: keepMemoryText })),
    maxPaused: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: maxPausedText }),
    ),
  },
  strict,
);

/** A sandbox's lifecycle as it applies. */
export const Lifecycle = Type.Object({
  onTimeout: OnTimeout,
  idleTimeout: Type.Union([Type.Integer(), Type.Null()], { description: idleTimeoutText }),
  processesKeepAwake: Type.Boolean({ description: processesKeepAwakeText }),
  autoResume: Type.Boolean({ description: autoResumeText }),
  keepMemory: Type.Boolean({ description: keepMemoryText }),
  maxPaused: Type.Union([Type.Integer(), Type.Null()], { description: maxPausedText }),
});

export const CreateSandboxRequest = Type.Object(
  {
    template: Type.String({ minLength: 1, maxLength: 64, default: "python" }),
    timeout: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "Seconds until `lifecycle.onTimeout` applies (default: the sandbox is deleted); omit for no expiry. Without use it still pauses after `lifecycle.idleTimeout`.",
      }),
    ),
    lifecycle: Type.Optional(LifecycleRequest),
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
  lifecycle: Lifecycle,
  pausedTo: Type.Union([Type.Literal("memory"), Type.Literal("disk"), Type.Null()], {
    description:
      "Where a paused sandbox sleeps (also while Pausing there): `memory` (frozen in place; wakes in milliseconds) or `disk` (off the host's memory). Null unless paused.",
  }),
  memoryPreserved: Type.Union([Type.Boolean(), Type.Null()], {
    description:
      "On disk: true when a resume brings back processes and memory, false when only the filesystem (processes start again). Null unless paused to disk.",
  }),
  lastActivityAt: Type.Union([Type.String(), Type.Null()], {
    description:
      "The last time a call reached the sandbox through this server (written at most every few seconds).",
  }),
  idleAt: Type.Union([Type.String(), Type.Null()], {
    description:
      "When it pauses for want of use unless used before; null: it never idles out (or is not running).",
  }),
  pausedUntil: Type.Union([Type.String(), Type.Null()], {
    description: "When it is deleted if still paused (`lifecycle.maxPaused`); null: kept.",
  }),
});

export const PauseRequest = Type.Object(
  {
    to: Type.Optional(
      Type.Union([Type.Literal("memory"), Type.Literal("disk")], {
        description:
          "`memory` (the default): frozen in place; `disk`: off the host's memory at once (see `memoryPreserved`).",
      }),
    ),
  },
  strict,
);

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
