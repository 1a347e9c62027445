import { createHash } from "node:crypto";
import { posix } from "node:path";
import { type Readable, Writable } from "node:stream";
import { Errors, EXECD_ENVD_USER_ENV, EXECD_WORKDIR_ENV, PaddockError } from "@paddock/common";
import type Docker from "dockerode";
import tar from "tar-stream";
import type { DockerRuntime } from "../docker/docker-runtime.js";
import type { BuildFiles } from "./build-files.js";
import { digestOfCopy, listArchive, selectForCopy } from "./build-files.js";
import { type BuildSpec, type BuildStep, describeStep } from "./build-spec.js";

/** Labels on the images a build commits: the step cache's key, and the template and build they belong to. */
const stepCacheLabel = "paddock.build.step";
const templateIdLabel = "paddock.template.id";
/** Whose cache a step image is in: a hash of the account, not its id. */
const stepAccountLabel = "paddock.build.account";

/** Longest line a step's output adds to the build log; longer ones are cut. */
const maxLogLine = 4096;

export interface BuildLimits {
  seconds: number;
  cpuMillis: number;
  memoryBytes: number;
  /** Largest image, all layers counted. */
  imageBytes: number;
}

export interface StepBuild {
  owner: string;
  templateId: string;
  buildId: string;
  spec: BuildSpec;
  /** The image of `spec.from`. */
  baseImage: string;
  limits: BuildLimits;
  /** Aborted by a cancel or the time limit; its reason says which. */
  signal: AbortSignal;
  log(message: string, level?: "info" | "warn" | "error"): void;
}

export interface BuiltImage {
  image: string;
  bytes: number;
  /** The default user of the template's commands and start command. */
  user: string;
  workdir: string;
}

/** A build that failed at a step: the step's number (from 1) and why. */
export class BuildFailure extends Error {
  override name = "BuildFailure";
  constructor(
    message: string,
    readonly step?: number,
  ) {
    super(message);
  }
}

interface ImageState {
  image: string;
  user: string;
  workdir: string;
  env: string[];
}

/**
 * Runs a build's steps on the host's engine, one committed image per step (decision 0198). RUN
 * runs in a container with a sandbox's isolation and the build's limits; COPY unpacks the
 * account's uploaded files into a container that never starts; ENV, WORKDIR and USER change the
 * image's configuration. Each step's image is labelled with a key hashed from the account, its
 * parent image and the step, so an unchanged prefix of steps is found again without running
 * (the cache is the account's own: the key holds the account). The final image keeps USER root,
 * as execd needs; the user the steps chose becomes the template's default user.
 */
export class StepBuilder {
  constructor(
    private readonly runtime: DockerRuntime,
    private readonly files: BuildFiles,
  ) {}

  private get docker(): Docker {
    return this.runtime.docker;
  }

  async build(build: StepBuild): Promise<BuiltImage> {
    const base = await this.docker.getImage(build.baseImage).inspect();
    const env = base.Config.Env ?? [];
    let state: ImageState = {
      image: base.Id,
      user: envValue(env, EXECD_ENVD_USER_ENV) || base.Config.User || "root",
      workdir: base.Config.WorkingDir || "/",
      env,
    };
    let cached = !build.spec.force;
    // Every step image there is, read once: a cached step then costs its key's hash alone.
    const cache = cached ? await this.stepImages() : new Map<string, string>();
    const steps = build.spec.steps;
    for (const [index, step] of steps.entries()) {
      const number = index + 1;
      const where = `step ${number}/${steps.length}${step.source ? ` (${step.source})` : ""}`;
      build.signal.throwIfAborted();
      cached &&= !step.force;
      try {
        const copied = step.type === "COPY" ? await this.copyOf(build.owner, step, state) : undefined;
        const key = stepKey(build.owner, state.image, step, copied && (await digestOfCopy(await copied())));
        const hit = cached ? cache.get(key) : undefined;
        if (hit) {
          build.log(`${where}: ${describeStep(step)} (cached)`);
          state = { ...state, image: hit, ...configAfter(state, step) };
          continue;
        }
        cached = false;
        build.log(`${where}: ${describeStep(step)}`);
        state = await this.runStep(build, state, step, key, number, copied);
      } catch (error) {
        if (build.signal.aborted) throw build.signal.reason;
        if (error instanceof BuildFailure || error instanceof PaddockError)
          throw new BuildFailure(`${where} ${describeStep(step).slice(0, 200)}: ${error.message}`, number);
        throw error;
      }
      const bytes = (await this.docker.getImage(state.image).inspect()).Size;
      if (bytes > build.limits.imageBytes) {
        throw new BuildFailure(
          `${where}: the image is ${bytes} bytes, over the build's limit of ${build.limits.imageBytes} (image size)`,
          number,
        );
      }
    }
    // The template's image: its own tag, root for execd, the chosen user recorded for commands.
    const repository = `paddock-templates/${build.templateId.toLowerCase()}`;
    const container = await this.docker.createContainer({ Image: state.image, Entrypoint: ["/bin/true"] });
    try {
      await commit(container, {
        repo: repository,
        tag: build.buildId.toLowerCase(),
        config: {
          User: "root",
          WorkingDir: state.workdir,
          Entrypoint: ["/bin/sh", "-c"],
          Cmd: [build.spec.startCommand ?? "sleep infinity"],
          Env: setEnv(state.env, {
            [EXECD_ENVD_USER_ENV]: state.user,
            ...(state.workdir !== "/" ? { [EXECD_WORKDIR_ENV]: state.workdir } : {}),
          }),
          // Not a step of the cache: the last step's labels would otherwise carry over to it.
          Labels: { [templateIdLabel]: build.templateId, [stepCacheLabel]: "", [stepAccountLabel]: "" },
        },
      });
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
    const image = `${repository}:${build.buildId.toLowerCase()}`;
    const bytes = (await this.docker.getImage(image).inspect()).Size;
    return { image, bytes, user: state.user, workdir: state.workdir };
  }

  /** Removes the step containers of builds that `ended` says are over (their server stopped mid-step). */
  async removeLeftovers(ended: (buildId: string) => Promise<boolean>): Promise<void> {
    for (const { name, buildId } of await this.runtime.buildContainers()) {
      // Names hold the build id in lower case; ids are generated in lower case.
      if (await ended(buildId)) await this.runtime.removeBuildContainer(name);
    }
  }

  /** Removes a build's image; its step images stay in the account's cache while others use them. */
  async removeImage(image: string): Promise<void> {
    await this.docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  }

  /**
   * Drops the account's step images that no image of its remaining templates stands on: the
   * engine refuses to remove an image another is built on, so newest first, each refusal kept.
   */
  async pruneCache(owner: string): Promise<void> {
    const images = await this.docker.listImages({
      all: true,
      filters: JSON.stringify({ label: [`${stepAccountLabel}=${accountKey(owner)}`] }),
    });
    const untagged = images.filter((image) => !(image.RepoTags ?? []).some((tag) => tag !== "<none>:<none>"));
    for (const image of untagged.sort((a, b) => b.Created - a.Created))
      await this.docker
        .getImage(image.Id)
        .remove({ noprune: false })
        .catch(() => undefined);
  }

  /** Step images by their cache keys. */
  private async stepImages(): Promise<Map<string, string>> {
    const images = await this.docker.listImages({
      all: true,
      filters: JSON.stringify({ label: [stepCacheLabel] }),
    });
    return new Map(
      images
        .filter((image) => image.Labels?.[stepCacheLabel])
        .map((image) => [image.Labels?.[stepCacheLabel] as string, image.Id]),
    );
  }

  private async runStep(
    build: StepBuild,
    state: ImageState,
    step: BuildStep,
    key: string,
    number: number,
    copied: (() => Promise<Readable>) | undefined,
  ): Promise<ImageState> {
    const next = { ...state, ...configAfter(state, step) };
    const config = {
      User: next.user,
      WorkingDir: next.workdir,
      Env: next.env,
      Labels: { [stepCacheLabel]: key, [stepAccountLabel]: accountKey(build.owner) },
    };
    if (step.type === "RUN") {
      const { container, name } = await this.runtime.createBuildContainer({
        buildId: build.buildId,
        step: number,
        image: state.image,
        command: step.command,
        user: step.user ?? state.user,
        workdir: state.workdir,
        cpuMillis: build.limits.cpuMillis,
        memoryBytes: build.limits.memoryBytes,
        diskBytes: build.limits.imageBytes,
      });
      try {
        await this.runToEnd(container, build);
        return { ...next, image: await commit(container, { config }) };
      } finally {
        await this.runtime.removeBuildContainer(name);
      }
    }
    const container = await this.docker.createContainer({
      Image: state.image,
      Entrypoint: ["/bin/true"],
      User: "root",
      ...(step.type === "WORKDIR" ? { WorkingDir: step.path } : {}),
    });
    try {
      if (copied) await container.putArchive(await copied(), { path: "/" });
      // WORKDIR makes its directory, as Docker does; the others only change the configuration.
      if (step.type === "WORKDIR") await container.putArchive(directoryArchive(step.path), { path: "/" });
      return { ...next, image: await commit(container, { config }) };
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /** Starts a RUN step's container, streams its output to the log, and waits for it; a non-zero exit fails it. */
  private async runToEnd(container: Docker.Container, build: StepBuild): Promise<void> {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    const lines = lineWriter((line) => build.log(line));
    this.docker.modem.demuxStream(stream, lines, lines);
    const stop = () => void container.kill().catch(() => undefined);
    build.signal.addEventListener("abort", stop, { once: true });
    try {
      await container.start();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      await new Promise((resolve) => setTimeout(resolve, 20));
      lines.end();
      build.signal.throwIfAborted();
      if (StatusCode !== 0) {
        const inspected = await container.inspect();
        if (inspected.State.OOMKilled || StatusCode === 137)
          throw new BuildFailure(
            `ran out of memory (the build's limit is ${build.limits.memoryBytes} bytes) or was killed, exit code ${StatusCode}`,
          );
        throw new BuildFailure(`exited with code ${StatusCode}`);
      }
    } finally {
      build.signal.removeEventListener("abort", stop);
      (stream as unknown as { destroy(): void }).destroy();
    }
  }

  /**
   * A COPY's archive, to unpack at `/`: the selected entries of the account's files, owned by the
   * step's user as the image resolves it. A function, as the archive is read twice (digest, then copy).
   */
  private async copyOf(
    owner: string,
    step: Extract<BuildStep, { type: "COPY" }>,
    state: ImageState,
  ): Promise<() => Promise<Readable>> {
    const user = step.user ?? state.user;
    // A name needs the image's passwd and group files; root and numeric ids do not.
    const { uid, gid } = numericUser(user) ?? (await this.userOf(state.image, user));
    const names = await listArchive(await this.files.open(owner, step.files));
    const refuse = (why: string): never => {
      throw new BuildFailure(why);
    };
    // A relative destination is in the working directory, as in Docker and on E2B.
    const dest = posix.isAbsolute(step.dest)
      ? step.dest
      : `${posix.join(state.workdir, step.dest)}${step.dest.endsWith("/") ? "/" : ""}`;
    return async () =>
      selectForCopy(
        await this.files.open(owner, step.files),
        names,
        { src: step.src, dest, uid, gid, mode: step.mode },
        refuse,
      );
  }

  private async userOf(image: string, user: string): Promise<{ uid: number; gid: number }> {
    const probe = await this.docker.createContainer({ Image: image, Entrypoint: ["/bin/true"] });
    return resolveUser(probe, user).finally(() => probe.remove({ force: true }).catch(() => undefined));
  }
}

function accountKey(owner: string): string {
  return createHash("sha256").update(owner).digest("hex").slice(0, 32);
}

/**
 * The step cache's key: the account, the parent image and the step (its source line aside); for
 * a COPY, what it writes rather than which upload it came from.
 */
function stepKey(owner: string, parent: string, step: BuildStep, copyDigest?: string): string {
  const { source: _source, force: _force, ...meaning } = step;
  const what = step.type === "COPY" ? { ...meaning, files: copyDigest } : meaning;
  return createHash("sha256")
    .update(JSON.stringify([owner, parent, what]))
    .digest("hex")
    .slice(0, 40);
}

/** The user, working directory and environment after a step. */
function configAfter(state: ImageState, step: BuildStep): Pick<ImageState, "user" | "workdir" | "env"> {
  switch (step.type) {
    case "ENV":
      return { user: state.user, workdir: state.workdir, env: setEnv(state.env, step.values) };
    case "WORKDIR":
      return { user: state.user, workdir: step.path, env: state.env };
    case "USER":
      return { user: step.user, workdir: state.workdir, env: state.env };
    default:
      return { user: state.user, workdir: state.workdir, env: state.env };
  }
}

function envValue(env: string[], name: string): string | undefined {
  return env.find((entry) => entry.startsWith(`${name}=`))?.slice(name.length + 1);
}

function setEnv(env: string[], values: Record<string, string>): string[] {
  const names = new Set(Object.keys(values));
  return [
    ...env.filter((entry) => !names.has(entry.slice(0, entry.indexOf("=")))),
    ...Object.entries(values).map(([name, value]) => `${name}=${value}`),
  ];
}

/**
 * Commits a container as an image; `config` is the image's configuration (the engine fills what
 * it leaves out from the container's). Returns the image id.
 */
async function commit(
  container: Docker.Container,
  options: { repo?: string; tag?: string; config: Record<string, unknown> },
): Promise<string> {
  const result = (await container.commit({
    _query: {
      container: container.id,
      pause: false,
      ...(options.repo ? { repo: options.repo, tag: options.tag } : {}),
    },
    _body: options.config,
  })) as { Id: string };
  return result.Id;
}

/** A writable stream that hands on whole lines, each cut at `maxLogLine`. */
function lineWriter(onLine: (line: string) => void): Writable {
  let pending = "";
  const emit = (line: string) => {
    const clean = line.replace(/\r$/, "");
    onLine(clean.length > maxLogLine ? `${clean.slice(0, maxLogLine)}… (line cut)` : clean);
  };
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) emit(line);
      if (pending.length > maxLogLine) {
        emit(pending);
        pending = "";
      }
      done();
    },
    final(done) {
      if (pending) emit(pending);
      done();
    },
  });
}

/** A tar holding one directory, with its parents. */
function directoryArchive(path: string): Readable {
  const pack = tar.pack();
  const parts = path.split("/").filter(Boolean);
  for (let depth = 1; depth <= parts.length; depth++)
    pack.entry({ name: `${parts.slice(0, depth).join("/")}/`, type: "directory", mode: 0o755 });
  pack.finalize();
  return pack as unknown as Readable;
}

/** uid and gid of `root` or `uid[:gid]` (each part `root` or a number); undefined for a name. */
function numericUser(user: string): { uid: number; gid: number } | undefined {
  const id = (part: string) => (part === "root" ? 0 : /^\d+$/.test(part) ? Number(part) : undefined);
  const [name = "", group] = user.split(":");
  const uid = id(name);
  const gid = group === undefined ? uid : id(group);
  return uid === undefined || gid === undefined ? undefined : { uid, gid };
}

/** uid and gid of `user` (`name`, `uid`, `name:group` or `uid:gid`) from the image's passwd and group files. */
async function resolveUser(container: Docker.Container, user: string): Promise<{ uid: number; gid: number }> {
  const [name, group] = user.split(":") as [string, string | undefined];
  const passwd = await readFileFrom(container, "/etc/passwd");
  const entry = passwd
    .split("\n")
    .map((line) => line.split(":"))
    .find((fields) => fields[0] === name || fields[2] === name);
  const uid = /^\d+$/.test(name) ? Number(name) : Number(entry?.[2]);
  if (!Number.isInteger(uid))
    throw new PaddockError(Errors.invalidTemplateBuild, `the image has no user ${name}`);
  if (group === undefined) return { uid, gid: Number(entry?.[3] ?? uid) };
  if (/^\d+$/.test(group)) return { uid, gid: Number(group) };
  const groups = await readFileFrom(container, "/etc/group");
  const gid = Number(
    groups
      .split("\n")
      .map((line) => line.split(":"))
      .find((fields) => fields[0] === group)?.[2],
  );
  if (!Number.isInteger(gid))
    throw new PaddockError(Errors.invalidTemplateBuild, `the image has no group ${group}`);
  return { uid, gid };
}

async function readFileFrom(container: Docker.Container, path: string): Promise<string> {
  const archive = await container.getArchive({ path }).catch(() => undefined);
  if (!archive) return "";
  let text = "";
  const extract = tar.extract();
  extract.on("entry", (_header, stream, next) => {
    stream.on("data", (chunk) => {
      if (text.length < 4 * 2 ** 20) text += (chunk as Buffer).toString("utf8");
    });
    stream.on("end", next);
  });
  await new Promise<void>((resolve, reject) => {
    extract.on("finish", resolve);
    extract.on("error", reject);
    (archive as NodeJS.ReadableStream).pipe(extract);
  });
  return text;
}
