import { BuildSpec } from "@paddock/runtime";
import { Type } from "@sinclair/typebox";

export const TemplateParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) });
export const BuildParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  buildId: Type.String({ minLength: 1, maxLength: 64 }),
});

const Resources = Type.Object(
  {
    cpu: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
    memory: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
  },
  { additionalProperties: false },
);

/** A build from a context archive: what the query says beside the archive in the body. */
export const ContextBuildQuery = Type.Object(
  {
    dockerfile: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, default: "Dockerfile" })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    cpu: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
    memory: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
    force: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** An archive in a request body: streamed to disk unread, so the schema only documents it. */
export const BuildContext = Type.Unsafe<unknown>({
  description: "A tar or tar.gz archive: a build context holding its Dockerfile, or files for COPY steps.",
});

/** A build from steps: a template to start from and what to do on it (decision 0198). */
export const StepsBuildRequest = Type.Object(
  {
    ...BuildSpec.properties,
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    resourceLimits: Type.Optional(Resources),
  },
  { additionalProperties: false },
);

export const BuildStatusSchema = Type.Union([
  Type.Literal("waiting"),
  Type.Literal("building"),
  Type.Literal("ready"),
  Type.Literal("error"),
  Type.Literal("cancelled"),
]);

export const TemplateBuild = Type.Object({
  id: Type.String(),
  templateId: Type.String(),
  status: BuildStatusSchema,
  reason: Type.Union([Type.String(), Type.Null()]),
  failedStep: Type.Union([Type.Integer(), Type.Null()]),
  steps: Type.Integer(),
  imageBytes: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Type.String(),
  startedAt: Type.Union([Type.String(), Type.Null()]),
  finishedAt: Type.Union([Type.String(), Type.Null()]),
});

export const AccountTemplate = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  published: Type.Boolean(),
  /** The build sandboxes start from; null until one succeeds. */
  currentBuildId: Type.Union([Type.String(), Type.Null()]),
  resourceLimits: Type.Record(Type.String(), Type.String()),
  user: Type.String(),
  workdir: Type.String(),
  startCommand: Type.Union([Type.String(), Type.Null()]),
  readyCommand: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const AccountTemplateDetail = Type.Composite([
  AccountTemplate,
  Type.Object({ builds: Type.Array(TemplateBuild) }),
]);

export const AccountTemplateList = Type.Object({ items: Type.Array(AccountTemplate) });

export const BuildStarted = Type.Object({ template: AccountTemplate, build: TemplateBuild });

export const UploadedFiles = Type.Object({
  /** What a COPY step's `files` names. */
  hash: Type.String(),
  bytes: Type.Integer(),
});

export const BuildLogQuery = Type.Object(
  {
    /** The first entry wanted, by its `seq`: the last one seen plus one. */
    from: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 1000 })),
  },
  { additionalProperties: false },
);

export const BuildLogEntry = Type.Object({
  seq: Type.Integer(),
  at: Type.String(),
  level: Type.Union([Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")]),
  message: Type.String(),
});

export const BuildLogPage = Type.Object({
  entries: Type.Array(BuildLogEntry),
  /** `from` for the next page. */
  next: Type.Integer(),
  status: BuildStatusSchema,
});
