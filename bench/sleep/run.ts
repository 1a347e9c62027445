/**
 * Sleep and wake (decisions 0190, 0194, 0196), each figure against raw docker in the same run:
 * - the first command on a sandbox paused in memory (resumed on use) against a command on a
 *   running one (both through execd, gVisor);
 * - a checkpoint and a start from it (runsc-netstack, runc), against `docker stop` and `docker
 *   start` of a container on runsc or runc;
 * - resume from disk with memory through Paddock, an idle python sandbox (gVisor on its own
 *   network stack, runc with CRIU), against `docker start` of the same image;
 * - host memory per Paddock sandbox paused to disk with its memory (runc, MemAvailable before
 *   they were created and after they were paused, over BENCH_SLEEP_N sandboxes).
 *   flock /work/bench.lock node --conditions=@paddock/source --import tsx bench/sleep/run.ts
 *   (BENCH_N=10 rounds, BENCH_SLEEP_N=100 containers by default)
 */
import { readFileSync } from "node:fs";
import { ExecdClient } from "../../packages/runtime/src/execd/client.js";
import { openTestStack, testDocker } from "../../packages/runtime/src/testing/index.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 10);
const many = Number(process.env.BENCH_SLEEP_N ?? 100);
const image = "paddock/base:bookworm";
const pythonImage = "paddock/template-python:latest";
const label = "paddock.test=bench-sleep";
const rows: Row[] = [];

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 2));
}

function memAvailableKiB(): number {
  return meminfo().MemAvailable ?? 0;
}

/** /proc/meminfo's figures, in KiB. */
function meminfo(): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const [, key, value] of readFileSync("/proc/meminfo", "utf8").matchAll(/^(\w+):\s+(\d+)/gm))
    fields[key as string] = Number(value);
  return fields;
}

/** Resident memory of the engine's daemons and of this process (which runs Paddock here), KiB. */
async function residentKiB(): Promise<Record<string, number>> {
  const rss = async (pid: string) =>
    Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+)/m)?.[1] ?? 0);
  const daemon = async (name: string) => {
    const pids = (await run("pidof", [name]).catch(() => ({ stdout: "" }))).stdout.trim().split(/\s+/);
    let total = 0;
    for (const pid of pids.filter(Boolean)) total += await rss(pid);
    return total;
  };
  return {
    dockerd: await daemon("dockerd"),
    containerd: await daemon("containerd"),
    paddock: await rss(String(process.pid)),
  };
}

/** Where memory went between two points: the kernel's unreclaimable slab and the daemons. */
async function memoryPoint(): Promise<Record<string, number>> {
  const info = meminfo();
  return {
    MemAvailable: info.MemAvailable ?? 0,
    SUnreclaim: info.SUnreclaim ?? 0,
    Shmem: info.Shmem ?? 0,
    Dirty: info.Dirty ?? 0,
    ...(await residentKiB()),
  };
}

async function docker(...args: string[]): Promise<string> {
  return (await run("docker", args)).stdout.trim();
}

/** Docker now and then refuses a checkpoint's blob as already stored (moby issue 42900): again. */
async function startFromCheckpoint(name: string, checkpoint: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await docker("start", "--checkpoint", checkpoint, name);
      return;
    } catch (error) {
      if (attempt >= 3 || !/already exists/.test(String((error as Error).message))) throw error;
    }
  }
}

// (a) First command on a sandbox paused in memory, against one on a running sandbox.
{
  const t = await openTestStack({ secure: "gvisor" });
  const sandbox = await t.stack.sandboxes.create({
    image: { uri: image },
    entrypoint: ["sleep", "infinity"],
  });
  const command = async () => {
    const execd = await ExecdClient.of(t.stack.sandboxes, sandbox.id);
    for await (const _event of execd.runCommand({ command: "true" })) {
      // drained
    }
  };
  const state = async () => (await t.stack.sandboxes.get(sandbox.id)).status.state;
  const awake: number[] = [];
  const asleep: number[] = [];
  await command();
  for (let i = 0; i < n; i++) {
    awake.push((await timed(command))[0]);
    await t.stack.sandboxes.pause(sandbox.id);
    await until(async () => (await state()) === "Paused");
    asleep.push((await timed(command))[0]);
  }
  await t.dispose();
  rows.push({
    name: "first command, paused in memory (gvisor)",
    subject: summarize(asleep),
    baselineName: "command, running",
    baseline: summarize(awake),
  });
}

// Resume from disk with memory through Paddock, an idle python sandbox, against `docker start`
// of a stopped container of the same image on the same engine runtime: gVisor on its own network
// stack (decision 0194) and runc with CRIU (decision 0196).
for (const runtime of [
  { secure: "gvisor", netstack: "runsc-netstack", engine: "runsc", name: "gvisor, netstack" },
  { secure: "runc", netstack: "", engine: "runc", name: "runc, CRIU" },
] as const) {
  const t = await openTestStack({
    secure: runtime.secure,
    config: { secure_runtime: { netstack_runtime: runtime.netstack } },
  });
  const sandbox = await t.stack.sandboxes.create({
    image: { uri: pythonImage },
    entrypoint: ["python3", "-c", "import time; time.sleep(1e9)"],
  });
  const state = async () => (await t.stack.sandboxes.get(sandbox.id)).status.state;
  const stopped = "paddock-bench-sleep-plain";
  await docker("rm", "-f", stopped).catch(() => "");
  await docker(
    "run",
    "-d",
    "--name",
    stopped,
    "--runtime",
    runtime.engine,
    "--label",
    label,
    "--network",
    "paddock-sandboxes",
    pythonImage,
    "python3",
    "-c",
    "import time; time.sleep(1e9)",
  );
  const resume: number[] = [];
  const start: number[] = [];
  for (let i = 0; i < n; i++) {
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await until(async () => (await state()) === "Paused");
    const { pause } = await t.stack.sandboxes.get(sandbox.id);
    if (pause?.to !== "disk" || !pause.memoryPreserved)
      throw new Error(`${runtime.name}: paused ${JSON.stringify(pause)}, not to disk with memory`);
    resume.push(
      (
        await timed(async () => {
          await t.stack.sandboxes.resume(sandbox.id);
          await until(async () => (await state()) === "Running");
        })
      )[0],
    );
    await docker("stop", "-t", "0", stopped);
    start.push((await timed(() => docker("start", stopped)))[0]);
  }
  await docker("rm", "-f", stopped);
  await t.dispose();
  rows.push({
    name: `resume from disk with memory → Running (${runtime.name}, python)`,
    subject: summarize(resume),
    baselineName: `docker start (${runtime.engine}, python)`,
    baseline: summarize(start),
  });
  console.log(markdownTable(rows));
}

// (b) Start from a checkpoint against a plain start, raw docker, on each runtime that keeps memory.
for (const runtime of [
  { checkpointed: "runsc-netstack", plain: "runsc" },
  { checkpointed: "runc", plain: "runc" },
]) {
  const checkpointed = "paddock-bench-sleep-checkpoint";
  const stopped = "paddock-bench-sleep-stopped";
  await docker("rm", "-f", checkpointed, stopped).catch(() => "");
  const common = ["--label", label, "--network", "paddock-sandboxes", image, "sleep", "infinity"];
  await docker("run", "-d", "--name", checkpointed, "--runtime", runtime.checkpointed, ...common);
  await docker("run", "-d", "--name", stopped, "--runtime", runtime.plain, ...common);
  const checkpoint: number[] = [];
  const restore: number[] = [];
  const start: number[] = [];
  const stop: number[] = [];
  for (let i = 0; i < n; i++) {
    checkpoint.push((await timed(() => docker("checkpoint", "create", checkpointed, `cp${i}`)))[0]);
    restore.push((await timed(() => startFromCheckpoint(checkpointed, `cp${i}`)))[0]);
    stop.push((await timed(() => docker("stop", "-t", "0", stopped)))[0]);
    start.push((await timed(() => docker("start", stopped)))[0]);
  }
  await docker("rm", "-f", checkpointed, stopped);
  rows.push({
    name: `docker checkpoint create (${runtime.checkpointed}, sleep)`,
    subject: summarize(checkpoint),
    baselineName: `docker stop -t 0 (${runtime.plain})`,
    baseline: summarize(stop),
  });
  rows.push({
    name: `docker start --checkpoint (${runtime.checkpointed}, sleep)`,
    subject: summarize(restore),
    baselineName: `docker start (${runtime.plain})`,
    baseline: summarize(start),
  });
}

console.log(markdownTable(rows));

// (c) Host memory per Paddock sandbox paused to disk with its memory (runc with CRIU, the
// runtime that keeps memory by default): idle python sandboxes, MemAvailable before they were
// created, once all run, and once all are paused to disk.
let memory: Record<string, number> = {};
{
  const t = await openTestStack({ secure: "runc" });
  const start = await memoryPoint();
  const before = start.MemAvailable ?? 0;
  const ids: string[] = [];
  for (let i = 0; i < many; i++) {
    const sandbox = await t.stack.sandboxes.create({
      image: { uri: pythonImage },
      entrypoint: ["python3", "-c", "import time; time.sleep(1e9)"],
    });
    ids.push(sandbox.id);
  }
  const running = memAvailableKiB();
  for (const id of ids) {
    await t.stack.sandboxes.pause(id, undefined, { to: "disk" });
    await until(async () => (await t.stack.sandboxes.get(id)).status.state === "Paused");
  }
  const kept = (await Promise.all(ids.map((id) => t.stack.sandboxes.get(id)))).filter(
    (sandbox) => sandbox.pause?.to === "disk" && sandbox.pause.memoryPreserved,
  ).length;
  // The checkpoints written out, so their pages count as the reclaimable cache they are.
  await run("sync", []);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const end = await memoryPoint();
  const paused = end.MemAvailable ?? 0;
  const root = ((await testDocker.info()) as { DockerRootDir: string }).DockerRootDir;
  const containers = await Promise.all(ids.map((id) => testDocker.getContainer(id).inspect()));
  const checkpointKiB = containers.map(async (container) =>
    Number(
      (await run("du", ["-sk", `${root}/containers/${container.Id}/checkpoints`])).stdout.split("\t")[0],
    ),
  );
  const onDiskMiB = (await Promise.all(checkpointKiB)).reduce((sum, kib) => sum + kib, 0) / many / 1024;
  await t.dispose();
  memory = {
    sandboxes: many,
    withMemoryKept: kept,
    perRunningMiB: (before - running) / many / 1024,
    perPausedToDiskMiB: (before - paused) / many / 1024,
    checkpointOnDiskMiB: onDiskMiB,
    // Per sandbox, MiB: how each part grew from before the creates to after the pauses.
    ...Object.fromEntries(
      Object.keys(start).map((key) => [
        `${key}PerSandboxMiB`,
        ((end[key] ?? 0) - (start[key] ?? 0)) / many / 1024,
      ]),
    ),
  };
  console.log(
    `${many} sandboxes: MemAvailable ${before} kB before, ${running} kB running, ${paused} kB paused to disk (${kept} with memory)`,
  );
}

console.log(markdownTable(rows));
console.log(memory);
writeResults("sleep", rows, { n, memory });
