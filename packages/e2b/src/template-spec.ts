import { Errors, PaddockError } from "@paddock/common";
import type { BuildSpec } from "@paddock/runtime";
import { Type } from "@sinclair/typebox";
import { templateAliases } from "./wire.js";

/** One step of E2B's serialized template (its SDK's `instructionsWithHashes`). */
const E2bStep = Type.Object({
  type: Type.String({ maxLength: 32 }),
  args: Type.Optional(Type.Array(Type.String({ maxLength: 65536 }), { maxItems: 1000 })),
  filesHash: Type.Optional(Type.String({ maxLength: 128 })),
  force: Type.Optional(Type.Boolean()),
  // Client-side settings of a COPY's upload, sent along; they change nothing here.
  forceUpload: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  resolveSymlinks: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  gzip: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
});

/** E2B's `TemplateBuildStartV2`, as its SDK's `serialize` sends it. */
export const E2bTemplateStart = Type.Object({
  fromImage: Type.Optional(Type.String({ maxLength: 512 })),
  fromTemplate: Type.Optional(Type.String({ maxLength: 128 })),
  fromImageRegistry: Type.Optional(Type.Unknown()),
  force: Type.Optional(Type.Boolean()),
  steps: Type.Optional(Type.Array(E2bStep, { maxItems: 500 })),
  startCmd: Type.Optional(Type.String({ maxLength: 65536 })),
  readyCmd: Type.Optional(Type.String({ maxLength: 65536 })),
});
export type E2bTemplateStart = typeof E2bTemplateStart.static;
type E2bStep = typeof E2bStep.static;

/**
 * Images E2B's builder starts from, as Paddock's templates: this server pulls no images. E2B's
 * own bases are its E2B-shaped templates; the common language and distribution images are the
 * Debian-built templates of the same purpose (their versions are Debian 12's, said in the log).
 */
const imageTemplates: Array<{ image: RegExp; template: string; approximate: boolean }> = [
  { image: /^(docker\.io\/)?e2bdev\/base(:[\w.-]+)?$/, template: "e2b-base", approximate: false },
  {
    image: /^(docker\.io\/)?e2bdev\/code-interpreter[\w.-]*(:[\w.-]+)?$/,
    template: "e2b-code-interpreter",
    approximate: false,
  },
  { image: /^(docker\.io\/)?(library\/)?python(:[\w.-]+)?$/, template: "python", approximate: true },
  { image: /^(docker\.io\/)?(library\/)?node(:[\w.-]+)?$/, template: "node", approximate: true },
  { image: /^(docker\.io\/)?(library\/)?(ubuntu|debian)(:[\w.-]+)?$/, template: "ubuntu", approximate: true },
];

/** What to build from, and a note for the build's log when it is not exactly what was asked. */
export function baseOf(start: E2bTemplateStart, templateIds: string[]): { from: string; note?: string } {
  if (start.fromImageRegistry !== undefined)
    refuse(
      "fromImageRegistry: this server pulls no images, so it takes no registry credentials; build from one of its templates with fromTemplate",
    );
  if (start.fromTemplate) return { from: templateAliases[start.fromTemplate] ?? start.fromTemplate };
  const image = start.fromImage ?? "e2bdev/base";
  const own = /^paddock\/template-([a-z0-9][a-z0-9._-]*)(:[\w.-]+)?$/.exec(image);
  if (own) return { from: own[1] as string };
  const known = imageTemplates.find((entry) => entry.image.test(image));
  if (!known)
    refuse(
      `fromImage ${JSON.stringify(image.slice(0, 200))}: this server pulls no images; build from one of its templates with fromTemplate(<id>): ${templateIds.join(", ")}`,
    );
  return known.approximate
    ? {
        from: known.template,
        note: `this server pulls no images: ${image} is built from its ${known.template} template (Debian 12's packages)`,
      }
    : { from: known.template };
}

/** E2B's steps as Paddock's (decision 0198), one for one, so E2B's step numbers name the same step. */
export function stepsOf(steps: E2bStep[]): BuildSpec["steps"] {
  return steps.map((step, index) => {
    const where = `steps[${index}]`;
    const args = step.args ?? [];
    const force = step.force ? { force: true } : {};
    const user = (value: string | undefined) => (value ? { user: value } : {});
    switch (step.type) {
      case "RUN":
        return { type: "RUN", command: args[0] ?? "", ...user(args[1]), ...force };
      case "COPY": {
        const [src = "", dest = "", owner, mode] = args;
        if (!step.filesHash) refuse(`${where}: a COPY names the hash of its uploaded files (filesHash)`);
        if (mode && !/^[0-7]{1,4}$/.test(mode))
          refuse(`${where}: mode ${JSON.stringify(mode.slice(0, 20))} is not an octal file mode`);
        return {
          type: "COPY",
          files: step.filesHash,
          src,
          dest,
          ...user(owner),
          ...(mode ? { mode: Number.parseInt(mode, 8) } : {}),
          ...force,
        };
      }
      case "ENV": {
        if (args.length % 2 !== 0) refuse(`${where}: ENV takes names and values in pairs`);
        const pairs = args.flatMap((name, i) => (i % 2 === 0 ? [[name, args[i + 1] as string]] : []));
        return { type: "ENV", values: Object.fromEntries(pairs), ...force };
      }
      case "WORKDIR":
        return { type: "WORKDIR", path: args[0] ?? "", ...force };
      case "USER":
        return { type: "USER", user: args[0] ?? "", ...force };
      default:
        return refuse(
          `${where}: step type ${JSON.stringify(step.type)} is not one this server builds (RUN, COPY, ENV, WORKDIR, USER)`,
        );
    }
  });
}

/** E2B's template as a Paddock build spec; the base's note, if any, opens the log. */
export function buildSpecOf(
  start: E2bTemplateStart,
  templateIds: string[],
): { spec: BuildSpec; notes: string[] } {
  const { from, note } = baseOf(start, templateIds);
  return {
    spec: {
      from,
      steps: stepsOf(start.steps ?? []),
      ...(start.startCmd ? { startCommand: start.startCmd } : {}),
      ...(start.readyCmd ? { readyCommand: start.readyCmd } : {}),
      ...(start.force ? { force: true } : {}),
    },
    notes: note ? [note] : [],
  };
}

function refuse(message: string): never {
  throw new PaddockError(Errors.invalidTemplateBuild, message);
}
