/**
 * Sleep and wake (decisions 0190, 0194), each figure against raw docker in the same run:
 * - the first command on a sandbox paused in memory (resumed on use) against a command on a
 *   running one (both through execd, gVisor);
 * - a checkpoint and a start from it (runsc-netstack), against `docker stop` and `docker start`
 *   of a container on runsc;
 * - host memory per container checkpointed to disk (MemAvailable before they were created and
 *   after they were checkpointed, over BENCH_SLEEP_N containers).
 *   flock /work/bench.lock node --conditions=@paddock/source --import tsx bench/sleep/run.ts
 *   (BENCH_N=10 rounds, BENCH_SLEEP_N=100 containers by default)
 */
import { readFileSync } from "node:fs";
import { ExecdClient } from "../../packages/runtime/src/execd/client.js";
import { openTestStack } from "../../packages/runtime/src/testing/index.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 10);
const many = Number(process.env.BENCH_SLEEP_N ?? 100);
const image = "paddock/base:bookworm";
const label = "paddock.test=bench-sleep";
const rows: Row[] = [];

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 2));
}

function memAvailableKiB(): number {
  const line = readFileSync("/proc/meminfo", "utf8").match(/^MemAvailable:\s+(\d+)/m);
  return Number(line?.[1] ?? 0);
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

// Resume from disk with memory through Paddock (runsc-netstack), against `docker start`.
{
  const t = await openTestStack({
    secure: "gvisor",
    config: { secure_runtime: { netstack_runtime: "runsc-netstack" } },
  });
  const sandbox = await t.stack.sandboxes.create({
    image: { uri: image },
    entrypoint: ["sleep", "infinity"],
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
    "runsc",
    "--label",
    label,
    "--network",
    "paddock-sandboxes",
    image,
    "sleep",
    "infinity",
  );
  const resume: number[] = [];
  const start: number[] = [];
  for (let i = 0; i < n; i++) {
    await t.stack.sandboxes.pause(sandbox.id, undefined, { to: "disk" });
    await until(async () => (await state()) === "Paused");
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
    name: "resume from disk with memory → Running (gvisor, netstack)",
    subject: summarize(resume),
    baselineName: "docker start (runsc)",
    baseline: summarize(start),
  });
  console.log(markdownTable(rows));
}

// (b) Start from a checkpoint against a plain start, raw docker.
{
  const checkpointed = "paddock-bench-sleep-checkpoint";
  const stopped = "paddock-bench-sleep-stopped";
  await docker("rm", "-f", checkpointed, stopped).catch(() => "");
  const common = ["--label", label, "--network", "paddock-sandboxes", image, "sleep", "infinity"];
  await docker("run", "-d", "--name", checkpointed, "--runtime", "runsc-netstack", ...common);
  await docker("run", "-d", "--name", stopped, "--runtime", "runsc", ...common);
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
    name: "docker checkpoint create (runsc-netstack, sleep)",
    subject: summarize(checkpoint),
    baselineName: "docker stop -t 0 (runsc)",
    baseline: summarize(stop),
  });
  rows.push({
    name: "docker start --checkpoint (runsc-netstack, sleep)",
    subject: summarize(restore),
    baselineName: "docker start (runsc)",
    baseline: summarize(start),
  });
}

console.log(markdownTable(rows));

// (c) Host memory per container checkpointed to disk.
let memory: Record<string, number> = {};
{
  const names = Array.from({ length: many }, (_, i) => `paddock-bench-sleep-mem-${i}`);
  const before = memAvailableKiB();
  for (const name of names) {
    await docker(
      "run",
      "-d",
      "--name",
      name,
      "--runtime",
      "runsc-netstack",
      "--label",
      label,
      "--network",
      "paddock-sandboxes",
      image,
      "sleep",
      "infinity",
    );
  }
  const running = memAvailableKiB();
  for (const name of names) await docker("checkpoint", "create", name, "cp");
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const paused = memAvailableKiB();
  for (const name of names) await docker("rm", "-f", name);
  memory = {
    containers: many,
    perRunningMiB: (before - running) / many / 1024,
    perCheckpointedMiB: (before - paused) / many / 1024,
  };
  console.log(
    `${many} containers: MemAvailable ${before} kB before, ${running} kB running, ${paused} kB checkpointed`,
  );
}

console.log(markdownTable(rows));
console.log(memory);
writeResults("sleep", rows, { n, memory });
