/**
 * An account's template build through the control plane (decision 0198) against `docker build` of
 * the same Dockerfile in the same run: a first build, and rebuilds after a cached build with one
 * step changed (the last RUN), the case a user iterating on a template lives in.
 *   node --conditions=@paddock/source --import tsx bench/template-builds/run.ts
 * BENCH_N=5 rebuilds of each by default. `docker build` runs the classic builder (this engine has
 * no BuildKit) with the engine's default runtime, runc; Paddock runs each RUN step under the
 * server's sandbox runtime (gVisor here), as every build must.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tar from "tar-stream";
import { startTestServer } from "../../packages/server/src/testing.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 5);
const stamp = Date.now().toString(36);

/** The Dockerfile, FROM the python template (`from` is how each side names it); `change` is the last RUN's. */
function dockerfile(from: string, change: string): string {
  return [
    `FROM ${from}`,
    'RUN python3 -c "import json, sys; print(json.dumps(sys.version_info[:2]))" > /python.json',
    "COPY app/ /app/",
    "RUN python3 -m compileall -q /app && ls /app > /app/listing.txt",
    "ENV MODE=bench",
    "WORKDIR /app",
    `RUN echo ${change} > /app/version.txt`,
  ].join("\n");
}

const files: Record<string, string> = {
  "app/main.py": "print('hello from the bench')\n",
  "app/util.py": "def double(x):\n    return 2 * x\n",
};

async function contextArchive(text: string): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries({ ...files, Dockerfile: text }))
    pack.entry({ name, mode: 0o644, mtime: new Date(0) }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `docker build` of the Dockerfile in a directory of its own; the image removed by the caller. */
async function dockerBuild(text: string, tag: string, noCache: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "paddock-bench-build-"));
  try {
    for (const [name, content] of Object.entries({ ...files, Dockerfile: text })) {
      const path = join(dir, name);
      await run("mkdir", ["-p", join(path, "..")]);
      writeFileSync(path, content);
    }
    await run("docker", ["build", ...(noCache ? ["--no-cache"] : []), "-q", "-t", tag, dir], {
      env: { ...process.env, DOCKER_BUILDKIT: "0" },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const t = await startTestServer({ config: { secure_runtime: { type: "gvisor" } } });
const token = await t.account(`bench-builds-${stamp}@example.com`);

/** One build through the control plane, waited for by following its log to the end. */
async function paddockBuild(name: string, text: string, force: boolean): Promise<void> {
  const answer = await fetch(`${t.url}/templates/${name}/builds${force ? "?force=true" : ""}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/x-tar" },
    body: await contextArchive(text),
  });
  if (answer.status !== 202) throw new Error(`build: ${answer.status} ${await answer.text()}`);
  const { build } = (await answer.json()) as { build: { id: string } };
  const log = await fetch(`${t.url}/templates/${name}/builds/${build.id}/logs`, {
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
  });
  const text_ = await log.text();
  if (!/"type":"status"[^\n]*"status":"ready"/.test(text_))
    throw new Error(`build ${build.id} failed:\n${text_}`);
}

const paddockFirst: number[] = [];
const dockerFirst: number[] = [];
const paddockRebuild: number[] = [];
const dockerRebuild: number[] = [];
try {
  // First builds: nothing cached (a new template name and --force; docker --no-cache).
  for (let i = 0; i < Math.min(n, 3); i++) {
    dockerFirst.push(
      (
        await timed(() =>
          dockerBuild(
            dockerfile("paddock/template-python:latest", "first"),
            `paddock-bench-build:${stamp}`,
            true,
          ),
        )
      )[0],
    );
    paddockFirst.push(
      (await timed(() => paddockBuild(`bench-${stamp}`, dockerfile("python", "first"), true)))[0],
    );
  }
  // Rebuilds after a cached build, the last RUN changed each time.
  for (let i = 0; i < n; i++) {
    const change = `change-${stamp}-${i}`;
    dockerRebuild.push(
      (
        await timed(() =>
          dockerBuild(
            dockerfile("paddock/template-python:latest", change),
            `paddock-bench-build:${stamp}`,
            false,
          ),
        )
      )[0],
    );
    paddockRebuild.push(
      (await timed(() => paddockBuild(`bench-${stamp}`, dockerfile("python", change), false)))[0],
    );
  }
} finally {
  await fetch(`${t.url}/templates/bench-${stamp}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${token}` },
  });
  await run("docker", ["rmi", "-f", `paddock-bench-build:${stamp}`]).catch(() => undefined);
  await t.dispose();
}

const rows: Row[] = [
  {
    name: "first build, 6 steps on python (nothing cached)",
    subject: summarize(paddockFirst),
    baselineName: "docker build --no-cache (classic builder, runc)",
    baseline: summarize(dockerFirst),
  },
  {
    name: "rebuild, last RUN changed (5 steps cached)",
    subject: summarize(paddockRebuild),
    baselineName: "docker build (classic builder, runc)",
    baseline: summarize(dockerRebuild),
  },
];
console.log(markdownTable(rows));
writeResults("template-builds", rows);
