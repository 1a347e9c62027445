import { type Static, Type } from "@sinclair/typebox";

/**
 * What an account's template build does (decision 0198): start from a template the account can
 * see, then steps, each a layer. A Dockerfile is parsed into this (dockerfile.ts), E2B's template
 * builder sends it almost as is, and the step builder runs it.
 */

/** Where a step came from, for errors that say where ("Dockerfile line 7"). */
const Source = Type.Optional(Type.String({ maxLength: 200 }));
/** Rebuild this step and every one after it even when the cache holds it. */
const Force = Type.Optional(Type.Boolean());
/** A user of the image, by name or uid[:gid]. */
const User = Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_.][A-Za-z0-9_.:-]*$" });
const AbsolutePath = Type.String({ minLength: 1, maxLength: 4096, pattern: "^/" });

export const RunStep = Type.Object(
  {
    type: Type.Literal("RUN"),
    /** Run with `/bin/sh -c`. */
    command: Type.String({ minLength: 1, maxLength: 65536 }),
    user: Type.Optional(User),
    source: Source,
    force: Force,
  },
  { additionalProperties: false },
);

export const CopyStep = Type.Object(
  {
    type: Type.Literal("COPY"),
    /** The sha256 of an archive the account uploaded (its build context, or E2B's files). */
    files: Type.String({ pattern: "^[a-f0-9]{64}$" }),
    /** A path in the archive, relative; `.` is all of it; `*` and `?` match within a name. */
    src: Type.String({ minLength: 1, maxLength: 4096 }),
    /** Where in the image: a directory when it ends in `/` or `src` is one. */
    dest: Type.String({ minLength: 1, maxLength: 4096 }),
    user: Type.Optional(User),
    /** File mode for the copied files (directories keep theirs). */
    mode: Type.Optional(Type.Integer({ minimum: 0, maximum: 0o7777 })),
    source: Source,
    force: Force,
  },
  { additionalProperties: false },
);

export const EnvStep = Type.Object(
  {
    type: Type.Literal("ENV"),
    values: Type.Record(
      Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }),
      Type.String({ maxLength: 65536 }),
    ),
    source: Source,
    force: Force,
  },
  { additionalProperties: false },
);

export const WorkdirStep = Type.Object(
  { type: Type.Literal("WORKDIR"), path: AbsolutePath, source: Source, force: Force },
  { additionalProperties: false },
);

export const UserStep = Type.Object(
  { type: Type.Literal("USER"), user: User, source: Source, force: Force },
  { additionalProperties: false },
);

export const BuildStep = Type.Union([RunStep, CopyStep, EnvStep, WorkdirStep, UserStep]);

export const BuildSpec = Type.Object(
  {
    /** A template the account can see: built in, its own, or published. */
    from: Type.String({ minLength: 1, maxLength: 128 }),
    steps: Type.Array(BuildStep, { maxItems: 500 }),
    /** Started at every sandbox's start, as the image's user, in its working directory. */
    startCommand: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
    /** A create returns once this exits 0 (polled with `/bin/sh -c`). */
    readyCommand: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
    /** Rebuild every step. */
    force: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type RunStep = Static<typeof RunStep>;
export type CopyStep = Static<typeof CopyStep>;
export type BuildStep = Static<typeof BuildStep>;
export type BuildSpec = Static<typeof BuildSpec>;

/** A step in one line, for logs and errors: `RUN apt-get install -y git`. */
export function describeStep(step: BuildStep): string {
  switch (step.type) {
    case "RUN":
      return `RUN ${step.command}`;
    case "COPY":
      return `COPY ${step.src} ${step.dest}`;
    case "ENV":
      return `ENV ${Object.entries(step.values)
        .map(([name, value]) => `${name}=${value}`)
        .join(" ")}`;
    case "WORKDIR":
      return `WORKDIR ${step.path}`;
    case "USER":
      return `USER ${step.user}`;
  }
}
