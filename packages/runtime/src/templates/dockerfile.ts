import { posix } from "node:path";
import { Errors, PaddockError } from "@paddock/common";
import {
  type Copy,
  DockerfileParser,
  type Env,
  type Flag,
  type Instruction,
  type JSONInstruction,
} from "dockerfile-ast";
import type { BuildSpec, BuildStep } from "./build-spec.js";

/** Image names a Dockerfile may give for a built-in template besides its id. */
const builtInImage = /^paddock\/template-([a-z0-9-]+)(:latest)?$/;

/** Instructions that say nothing a Paddock sandbox uses; the build notes each and goes on. */
const ignored = new Set(["EXPOSE", "LABEL", "MAINTAINER", "STOPSIGNAL", "HEALTHCHECK", "VOLUME"]);

export interface ParsedDockerfile {
  spec: BuildSpec;
  /** What was read and left out (`EXPOSE 8080`), for the build's log. */
  notes: string[];
}

/**
 * A Dockerfile as build steps (decision 0198): one stage, FROM a template the account can see,
 * then RUN, COPY/ADD (from the build context, whose archive is `contextFiles`), ENV, ARG, WORKDIR
 * and USER; CMD or ENTRYPOINT becomes the start command. What would reach past the build's
 * sandbox is refused with the line it is on: other stages and images (`COPY --from`), RUN's
 * `--mount`, `--network` and `--security`, ADD of a URL.
 */
export function parseDockerfile(text: string, contextFiles: string): ParsedDockerfile {
  const dockerfile = DockerfileParser.parse(text);
  const steps: BuildStep[] = [];
  const notes: string[] = [];
  const args = new Map<string, string>();
  const env = new Map<string, string>();
  let from: string | undefined;
  let workdir = "/";
  let startCommand: string | undefined;

  for (const instruction of dockerfile.getInstructions()) {
    const keyword = instruction.getKeyword().toUpperCase();
    const line = instruction.getRange().start.line + 1;
    const source = `Dockerfile line ${line}`;
    const refuse = (why: string): never => {
      throw new PaddockError(Errors.invalidTemplateBuild, `${source}: ${keyword} ${why}`);
    };
    const expand = (value: string) => expandVariables(value, new Map([...args, ...env]));
    if (keyword !== "FROM" && keyword !== "ARG" && from === undefined)
      refuse("comes before FROM; a Dockerfile starts with FROM (ARG may come first)");
    switch (keyword) {
      case "FROM": {
        if (from !== undefined)
          refuse("starts a second stage; builds here have one stage (FROM a template, then steps)");
        if (flagsOf(instruction).length) refuse(`takes no flags here (${flagNames(instruction)})`);
        const [image, as, stage] = instruction.getArguments().map((argument) => argument.getValue());
        if (!image || (as && (as.toLowerCase() !== "as" || !stage)))
          refuse("names one template: FROM <template>");
        const name = expand(image as string);
        from = builtInImage.exec(name)?.[1] ?? name;
        break;
      }
      case "ARG":
        for (const argument of instruction.getArguments()) {
          const [name, ...value] = argument.getValue().split("=");
          if (!name || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
            refuse(`names no variable: ${argument.getValue()}`);
          // A build argument has its default here: there is no --build-arg to give another.
          args.set(name as string, expand(value.join("=")));
        }
        break;
      case "RUN": {
        const flags = flagsOf(instruction);
        if (flags.length)
          refuse(
            `${flagNames(instruction)} is not available here: a build step has what a sandbox has, nothing more`,
          );
        const command = commandOf(instruction as JSONInstruction);
        if (!command) refuse("has no command");
        steps.push({
          type: "RUN",
          // ARG values are the command's environment, as in Docker, and stay out of the image.
          command: args.size ? `${exportsOf(args)}${command}` : (command as string),
          source,
        });
        break;
      }
      case "COPY":
      case "ADD": {
        let user: string | undefined;
        let mode: number | undefined;
        for (const flag of flagsOf(instruction)) {
          const name = flag.getName();
          const value = flag.getValue() ?? "";
          if (name === "chown") user = expand(value);
          else if (name === "chmod" && /^[0-7]{3,4}$/.test(value)) mode = Number.parseInt(value, 8);
          else if (name === "from")
            refuse("--from reads another stage or image; copy from the build context");
          else if (name !== "link") refuse(`--${name} is not supported here`);
        }
        if ((instruction as Copy).getHeredocs?.().length) refuse("with a heredoc is not supported here");
        const paths = argumentsOf(instruction as JSONInstruction).map(expand);
        if (paths.length < 2) refuse("needs a source and a destination");
        const dest = paths.pop() as string;
        if (paths.length > 1 && !dest.endsWith("/"))
          refuse("of several sources needs a destination ending in /");
        const target = posix.isAbsolute(dest)
          ? dest
          : posix.join(workdir, dest) + (dest.endsWith("/") ? "/" : "");
        for (const src of paths) {
          if (/^[a-z]+:\/\//i.test(src)) refuse(`of a URL (${src}): fetch it in a RUN step`);
          if (posix.isAbsolute(src) || posix.normalize(src).split("/")[0] === "..")
            refuse(`source ${src} is outside the build context`);
          steps.push({
            type: "COPY",
            files: contextFiles,
            src,
            dest: target,
            ...(user ? { user } : {}),
            ...(mode !== undefined ? { mode } : {}),
            source,
          });
        }
        break;
      }
      case "ENV": {
        const values: Record<string, string> = {};
        for (const property of (instruction as Env).getProperties()) {
          const value = expand(property.getUnescapedValue() ?? "");
          values[property.getName()] = value;
          env.set(property.getName(), value);
        }
        if (!Object.keys(values).length) refuse("sets nothing");
        steps.push({ type: "ENV", values, source });
        break;
      }
      case "WORKDIR": {
        const path = expand(instruction.getArgumentsContent() ?? "");
        if (!path) refuse("needs a path");
        workdir = posix.resolve(workdir, path);
        steps.push({ type: "WORKDIR", path: workdir, source });
        break;
      }
      case "USER": {
        const user = expand(instruction.getArgumentsContent() ?? "").trim();
        if (!user) refuse("needs a user");
        steps.push({ type: "USER", user, source });
        break;
      }
      case "CMD":
      case "ENTRYPOINT": {
        const command = commandOf(instruction as JSONInstruction);
        if (command) startCommand = command;
        break;
      }
      default:
        if (ignored.has(keyword)) notes.push(`${source}: ${keyword} has no effect here, left out`);
        else refuse("is not supported here");
    }
  }
  if (from === undefined) throw new PaddockError(Errors.invalidTemplateBuild, "the Dockerfile has no FROM");
  return { spec: { from, steps, ...(startCommand ? { startCommand } : {}) }, notes };
}

function flagsOf(instruction: Instruction): Flag[] {
  return "getFlags" in instruction ? (instruction as JSONInstruction).getFlags() : [];
}

function flagNames(instruction: Instruction): string {
  return flagsOf(instruction)
    .map((flag) => `--${flag.getName()}`)
    .join(", ");
}

/** Arguments of the JSON form (`["a", "b"]`) or the shell form, flags left out. */
function argumentsOf(instruction: JSONInstruction): string[] {
  const json = instruction.getJSONStrings();
  if (json.length) return json.map((argument) => argument.getJSONValue());
  return instruction.getArguments().map((argument) => argument.getValue());
}

/** The command a RUN, CMD or ENTRYPOINT gives, as one line for `/bin/sh -c`. */
function commandOf(instruction: JSONInstruction): string | undefined {
  const json = instruction.getJSONStrings();
  if (json.length) return json.map((argument) => shellQuote(argument.getJSONValue())).join(" ");
  const flags = flagsOf(instruction);
  const content = instruction.getArgumentsContent();
  if (!content) return undefined;
  // The shell form's text after any flags, its line continuations already joined.
  const last = flags.at(-1);
  if (!last) return content.trim();
  const raw = instruction.getRawArgumentsContent() ?? "";
  return raw
    .slice(raw.indexOf(`--${last.getName()}`))
    .replace(/^\S+\s*/, "")
    .trim();
}

function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

function exportsOf(values: Map<string, string>): string {
  return [...values].map(([name, value]) => `export ${name}=${shellQuote(value)}; `).join("");
}

/** `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME:+other}` from the ARG and ENV values so far. */
export function expandVariables(value: string, known: Map<string, string>): string {
  return value.replace(
    /\\\$|\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (match, braced?: string, operator?: string, word?: string, bare?: string) => {
      if (match === "\\$") return "$";
      const current = known.get((braced ?? bare) as string);
      if (operator === "-") return current ? current : (word ?? "");
      if (operator === "+") return current ? (word ?? "") : "";
      return current ?? "";
    },
  );
}
