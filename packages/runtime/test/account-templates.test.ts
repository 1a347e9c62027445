import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { isPaddockError } from "@paddock/common";
import Docker from "dockerode";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDockerfile } from "../src/templates/dockerfile.js";
import type { AccountTemplate, TemplateBuild } from "../src/templates/template-repository.js";
import { dockerExec, openTestStack, type TestStack } from "../src/testing/index.js";

const docker = new Docker();
/** Accounts of this run: the step cache is per account, and must not carry over between runs. */
const run = Math.random().toString(36).slice(2, 8);
const account = (name: string) => `${name}_${run}`;
const quota = { plan: "test", maxTemplates: 5, maxBuilds: 3 };

/** A tar of `files` (name → content). */
async function archive(files: Record<string, string>): Promise<Readable> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) pack.entry({ name, mode: 0o644 }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Readable.from([Buffer.concat(chunks)]);
}

async function finished(test: TestStack, template: AccountTemplate, buildId: string): Promise<TemplateBuild> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const build = await test.stack.templateBuilds.build(template, buildId);
    if (build && !["waiting", "building"].includes(build.status)) return build;
    if (Date.now() > deadline) throw new Error(`build ${buildId} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function logText(test: TestStack, buildId: string): Promise<string> {
  return (await test.stack.templateBuilds.logs(buildId, 0, 10_000)).map((entry) => entry.message).join("\n");
}

async function errorOf(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isPaddockError(error)) throw new Error(`expected a Paddock error, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

/** Builds `dockerfile` with `files` as its context for `owner`; resolves with the ended build. */
async function buildDockerfile(
  test: TestStack,
  owner: string,
  name: string,
  dockerfile: string,
  files: Record<string, string> = {},
): Promise<{ template: AccountTemplate; build: TemplateBuild }> {
  const builds = test.stack.templateBuilds;
  const { hash } = await builds.storeFiles(owner, await archive({ ...files, Dockerfile: dockerfile }));
  const { spec, notes } = parseDockerfile(dockerfile, hash);
  const { template, build } = await builds.request({ owner, name, quota });
  await builds.run(build, spec, notes);
  return { template, build: await finished(test, template, build.id) };
}

describe.each(["gvisor", "runc"] as const)("account template builds (%s)", (secure) => {
  const account = (name: string) => `${name}_${secure}_${run}`;
  let test: TestStack;
  beforeAll(async () => {
    test = await openTestStack({ secure });
  }, 60_000);
  afterAll(async () => {
    await test?.dispose();
  });

  it("builds a Dockerfile in steps, starts sandboxes of it for its account only, and reuses unchanged steps", async () => {
    const dockerfile = [
      "FROM python",
      "ARG GREETING=hello",
      "WORKDIR /app",
      "COPY app/ ./",
      "COPY notes.txt /opt/notes/",
      "ENV NAME=paddock",
      'RUN echo "$GREETING $NAME from $(cat /app/hello.txt)" > /app/out.txt && uname -r',
      "RUN useradd -m builder && chown builder /app",
      "USER builder",
      "RUN whoami > /app/who.txt",
      "EXPOSE 8000",
      'CMD ["python3", "-m", "http.server", "8000"]',
    ].join("\n");
    const files = { "app/hello.txt": "the context", "notes.txt": "notes" };
    const { template, build } = await buildDockerfile(test, account("acc_a"), "my-env", dockerfile, files);
    const log = await logText(test, build.id);
    expect(build.status, log).toBe("ready");
    expect(log).toContain("Dockerfile line 11: EXPOSE has no effect here");
    // Under gVisor the step ran on gVisor's kernel, not the host's.
    if (secure === "gvisor") expect(log).toMatch(/^4\.4\.0/m);

    const sandbox = await test.stack.sandboxes.create({
      template: "my-env",
      owner: account("acc_a"),
      timeout: 300,
    });
    try {
      const { output } = await dockerExec(sandbox.id, [
        "sh",
        "-c",
        "cat /app/out.txt /app/who.txt /opt/notes/notes.txt; echo; ls -l /app/hello.txt; echo $PADDOCK_ENVD_USER",
      ]);
      expect(output).toContain("hello paddock from the context");
      expect(output).toContain("builder");
      expect(output).toContain("notes");
      expect(output).toMatch(/root.*\/app\/hello\.txt/);
      // The start command runs as the template's user.
      const processes = await dockerExec(sandbox.id, ["ps", "-eo", "user:20,args"]);
      expect(processes.output).toMatch(/builder\s+python3 -m http.server 8000/);
    } finally {
      await test.stack.sandboxes.delete(sandbox.id);
    }

    // Its account names it by its id too; another sees no such template, and cannot build from it.
    expect((await test.stack.templates.find(template.id, account("acc_a")))?.image).toBe(build.image);
    expect(await test.stack.templates.find("my-env", account("acc_b"))).toBeUndefined();
    expect(
      (await errorOf(test.stack.sandboxes.create({ template: "my-env", owner: account("acc_b") }))).code,
    ).toBe("template_not_found");
    expect(
      (await errorOf(test.stack.sandboxes.create({ template: template.id, owner: account("acc_b") }))).code,
    ).toBe("template_not_found");
    const stranger = await buildDockerfile(test, account("acc_b"), "copycat", "FROM my-env\nRUN true").catch(
      (error: unknown) => error,
    );
    expect(isPaddockError(stranger) && stranger.code).toBe("invalid_template_build");

    // The same Dockerfile again: every step from the cache. One changed step: it and those after it run.
    const again = await buildDockerfile(test, account("acc_a"), "my-env", dockerfile, files);
    const againLog = await logText(test, again.build.id);
    expect(again.build.status).toBe("ready");
    expect(againLog.match(/\(cached\)$/gm)?.length).toBe(8);
    const changed = await buildDockerfile(
      test,
      account("acc_a"),
      "my-env",
      dockerfile.replace("whoami", "id -un"),
      files,
    );
    const changedLog = await logText(test, changed.build.id);
    expect(changedLog.match(/\(cached\)$/gm)?.length).toBe(7);
    // Another account's identical build shares nothing: its steps all run.
    const other = await buildDockerfile(test, account("acc_b"), "my-env", dockerfile, files);
    expect(other.build.status).toBe("ready");
    expect((await logText(test, other.build.id)).match(/\(cached\)$/gm)).toBeNull();

    // Deleting one of an account's templates leaves its others whole.
    const second = await buildDockerfile(
      test,
      account("acc_a"),
      "my-env-2",
      "FROM my-env\nRUN echo two > /tmp/two.txt",
    );
    expect(second.build.status, second.build.reason ?? "").toBe("ready");
    await test.stack.templateBuilds.remove(second.template);
    const still = await test.stack.sandboxes.create({
      template: "my-env",
      owner: account("acc_a"),
      timeout: 300,
    });
    expect((await dockerExec(still.id, ["cat", "/app/out.txt"])).output).toContain("hello paddock");
    await test.stack.sandboxes.delete(still.id);

    // In use: refused. Unused: gone with its images.
    const inUse = await test.stack.sandboxes.create({
      template: "my-env",
      owner: account("acc_b"),
      timeout: 300,
    });
    const otherTemplate = (await test.stack.templateBuilds.find(
      account("acc_b"),
      "my-env",
    )) as AccountTemplate;
    expect((await errorOf(test.stack.templateBuilds.remove(otherTemplate))).code).toBe("template_in_use");
    await test.stack.sandboxes.delete(inUse.id);
    await test.stack.templateBuilds.remove(otherTemplate);
    expect(await test.stack.templates.find("my-env", account("acc_b"))).toBeUndefined();
    await expect(docker.getImage(other.build.image as string).inspect()).rejects.toThrow();
    // With it went the account's step cache, which nothing of its own stands on any more.
    const cacheLeft = await docker.listImages({
      all: true,
      filters: JSON.stringify({
        label: [
          `paddock.build.account=${createHash("sha256").update(account("acc_b")).digest("hex").slice(0, 32)}`,
        ],
      }),
    });
    expect(cacheLeft).toEqual([]);
  }, 400_000);

  it("fails a build at the step that fails, and keeps the template on its last good build", async () => {
    const good = await buildDockerfile(test, account("acc_c"), "steady", "FROM ubuntu\nRUN echo one > /one");
    expect(good.build.status).toBe("ready");
    const bad = await buildDockerfile(
      test,
      account("acc_c"),
      "steady",
      "FROM ubuntu\nRUN echo one > /one\nRUN echo about to fail; exit 3\nRUN echo never",
    );
    expect(bad.build.status).toBe("error");
    expect(bad.build.failedStep).toBe(2);
    expect(bad.build.reason).toContain("Dockerfile line 3");
    expect(bad.build.reason).toContain("exited with code 3");
    expect(await logText(test, bad.build.id)).toContain("about to fail");
    const template = (await test.stack.templateBuilds.find(account("acc_c"), "steady")) as AccountTemplate;
    expect(template.currentBuildId).toBe(good.build.id);
  }, 200_000);

  it("runs steps with a sandbox's reach and no more, and cancels a running build", async () => {
    const probe = await buildDockerfile(
      test,
      account("acc_d"),
      "probe",
      [
        "FROM ubuntu",
        // No engine socket, no host mounts, no privileges to mount anything or reach devices.
        "RUN test ! -e /var/run/docker.sock && test ! -e /run/docker.sock",
        "RUN ! grep -E ' /(var/lib/docker|work|root/.docker)' /proc/mounts",
        "RUN ! mount -t tmpfs none /mnt 2>/dev/null",
        "RUN ! unshare -Ur mount -t tmpfs none /mnt 2>/dev/null",
      ].join("\n"),
    );
    expect(probe.build.status, await logText(test, probe.build.id)).toBe("ready");

    const builds = test.stack.templateBuilds;
    const { template, build } = await builds.request({ owner: account("acc_d"), name: "slow", quota });
    await builds.run(build, { from: "ubuntu", steps: [{ type: "RUN", command: "echo started; sleep 300" }] });
    const deadline = Date.now() + 60_000;
    while (!(await logText(test, build.id)).includes("started") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const asked = Date.now();
    await builds.cancel({ ...build, status: "building" });
    const cancelled = await finished(test, template, build.id);
    expect(cancelled.status).toBe("cancelled");
    expect(Date.now() - asked).toBeLessThan(15_000);
    const left = await docker.listContainers({
      all: true,
      filters: JSON.stringify({
        name: [`paddock-build-${test.config.server.instance.toLowerCase()}-${build.id}`],
      }),
    });
    expect(left).toEqual([]);
    // A step container whose server stopped mid-build is removed by the next sweep.
    const leftover = `paddock-build-${test.config.server.instance.toLowerCase()}-bld-gone-1`;
    await docker.createContainer({ name: leftover, Image: "paddock/template-ubuntu:latest", Cmd: ["true"] });
    await test.stack.templateBuilds.sweepStale();
    await expect(docker.getContainer(leftover).inspect()).rejects.toThrow();
  }, 200_000);

  it("refuses what a build cannot do here, naming the line", async () => {
    const cases: [string, RegExp][] = [
      ["FROM ubuntu\nCOPY --from=python /etc/passwd /x", /line 2: COPY --from/],
      ["FROM ubuntu\nRUN --mount=type=bind,source=/,target=/host true", /line 2: RUN --mount/],
      ["FROM ubuntu\nRUN --security=insecure true", /line 2: RUN --security/],
      ["FROM ubuntu\nADD https://example.com/x /x", /line 2: ADD of a URL/],
      ["FROM ubuntu\nCOPY ../outside /x", /outside the build context/],
      ["FROM ubuntu AS one\nRUN true\nFROM one", /line 3: FROM starts a second stage/],
      ["RUN true", /line 1: RUN comes before FROM/],
    ];
    for (const [dockerfile, message] of cases) {
      let caught: unknown;
      try {
        parseDockerfile(dockerfile, "0".repeat(64));
      } catch (error) {
        caught = error;
      }
      expect(isPaddockError(caught) && caught.code, dockerfile).toBe("invalid_template_build");
      expect((caught as Error).message).toMatch(message);
    }
    // A base that is not a template, and a COPY of files never uploaded.
    const builds = test.stack.templateBuilds;
    const { build } = await builds.request({ owner: account("acc_e"), name: "nothing", quota });
    expect((await errorOf(builds.run(build, { from: "paddock/execd:0.1.0", steps: [] }))).code).toBe(
      "invalid_template_build",
    );
    expect(
      (
        await errorOf(
          builds.run(build, {
            from: "ubuntu",
            steps: [{ type: "COPY", files: "a".repeat(64), src: ".", dest: "/x/" }],
          }),
        )
      ).code,
    ).toBe("template_files_not_found");
    expect((await errorOf(builds.request({ owner: account("acc_e"), name: "python", quota }))).code).toBe(
      "template_name_taken",
    );
    expect((await errorOf(builds.request({ owner: account("acc_e"), name: "Bad Name", quota }))).code).toBe(
      "invalid_request",
    );
  }, 60_000);
});

describe("account template build limits", () => {
  let test: TestStack;
  beforeAll(async () => {
    test = await openTestStack({
      config: {
        templates: {
          build_timeout_seconds: 6,
          build_memory: "96Mi",
          max_image_size: "170Mi",
          max_concurrent_builds: 1,
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await test?.dispose();
  });

  it("stops a build past its time, memory or image size and says which", async () => {
    const overLimits = [
      { name: "slow", run: "sleep 60", reason: "build time" },
      { name: "hungry", run: "head -c 400M /dev/zero | tail > /dev/null", reason: "out of memory" },
      { name: "large", run: "head -c 40M /dev/urandom > /big", reason: "image size" },
    ];
    for (const { name, run, reason } of overLimits) {
      const { build } = await buildDockerfile(test, account("acc_l"), name, `FROM ubuntu\nRUN ${run}`);
      expect(build.status, name).toBe("error");
      expect(build.reason, name).toContain(reason);
    }
    // The account is held to its plan's number of templates.
    const builds = test.stack.templateBuilds;
    const few = { plan: "test", maxTemplates: 3, maxBuilds: 3 };
    expect(
      (await errorOf(builds.request({ owner: account("acc_l"), name: "fourth", quota: few }))).code,
    ).toBe("template_limit_reached");
  }, 200_000);

  it("runs as many builds at once as the server allows; the others wait, and can be cancelled waiting", async () => {
    const builds = test.stack.templateBuilds;
    const owner = account("acc_slots");
    const first = await builds.request({ owner, name: "first", quota });
    await builds.run(first.build, { from: "ubuntu", steps: [{ type: "RUN", command: "sleep 3" }] });
    const second = await builds.request({ owner, name: "second", quota });
    await builds.run(second.build, { from: "ubuntu", steps: [{ type: "RUN", command: "true" }] });
    const deadline = Date.now() + 30_000;
    while (
      !(await logText(test, second.build.id)).includes("waiting for one of this server's 1 build slots")
    ) {
      if (Date.now() > deadline) throw new Error("the second build never said it waits");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await builds.cancel({ ...second.build, status: "building" });
    expect((await finished(test, second.template, second.build.id)).status).toBe("cancelled");
    expect((await finished(test, first.template, first.build.id)).status).toBe("ready");
  }, 120_000);
});

describe("published account templates", () => {
  let test: TestStack;
  const name = `shared-${run}`;
  beforeAll(async () => {
    test = await openTestStack({ config: { pools: { sizes: { [name]: 1 } } } });
  }, 60_000);
  afterAll(async () => {
    await test?.dispose();
  });

  /** The pool's one Running member, once it has one from `image`. */
  async function poolMember(image: string): Promise<string> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const members = await test.stack.database.db
        .selectFrom("sandboxes")
        .select(["id", "image_uri"])
        .where("pooled_for", "=", name)
        .where("state", "=", "Running")
        .execute();
      const member = members.find((sandbox) => sandbox.image_uri === image);
      if (member && members.length === 1) return member.id;
      if (Date.now() > deadline) throw new Error(`no pooled sandbox of ${image}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it("is started by every account, from a warm pool that refills from each new build", async () => {
    const owner = account("acc_pub");
    const first = await buildDockerfile(test, owner, name, "FROM ubuntu\nRUN echo first > /build.txt");
    expect(first.build.status).toBe("ready");
    // Private until published: no pool, no other account.
    expect(await test.stack.templates.find(name, account("acc_other"))).toBeUndefined();
    await test.stack.templateBuilds.setPublished(first.template, true);
    expect((await test.stack.templates.find(name, account("acc_other")))?.image).toBe(first.build.image);
    // Its name is now taken for every other account.
    expect(
      (await errorOf(test.stack.templateBuilds.request({ owner: account("acc_other"), name, quota }))).code,
    ).toBe("template_name_taken");

    const warm = await poolMember(first.build.image as string);
    const claimed = await test.stack.sandboxes.create({
      template: name,
      owner: account("acc_other"),
      timeout: 300,
    });
    expect(claimed.id).toBe(warm);
    await test.stack.sandboxes.delete(claimed.id);

    // A new build becomes current once it succeeded; the pool's members follow it.
    const second = await buildDockerfile(test, owner, name, "FROM ubuntu\nRUN echo second > /build.txt");
    expect(second.build.status).toBe("ready");
    const fresh = await poolMember(second.build.image as string);
    const { output } = await dockerExec(fresh, ["cat", "/build.txt"]);
    expect(output.trim()).toBe("second");
  }, 300_000);
});
