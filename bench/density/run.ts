/**
 * Density under gVisor: N idle sandboxes at once, the host memory each costs, and warm and cold
 * create latency at that density against raw `docker run -d` of the same image in the same run.
 *   node --conditions=@paddock/source --import tsx bench/density/run.ts
 *   BENCH_DENSITY_N (idle sandboxes, default 100), BENCH_N (timed creates, default 20)
 */
import { readdirSync, readFileSync } from "node:fs";
import { startTestServer } from "../../packages/server/src/testing.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const idle = Number(process.env.BENCH_DENSITY_N ?? 100);
const n = Number(process.env.BENCH_N ?? 20);
const poolSize = 5;
const template = "ubuntu";
const image = `paddock/template-${template}:latest`;
/** Creates in flight while filling: enough to keep both cores busy, few enough to stay fair. */
const fillConcurrency = 4;
const availableMiB = () =>
  Number(/MemAvailable:\s+(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1]) / 1024;
/**
 * Host memory the sandboxes' own processes account for, as PSS (shared pages split between the
 * processes sharing them): each container's shim and everything under it (runsc-sandbox, its
 * gofer and stubs). Unlike MemAvailable, other work on the machine does not move it.
 */
function attributedPssMiB(containerIds: string[]): number {
  const children = new Map<number, number[]>();
  const shims = new Map<string, number>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), pid]);
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const id = args[args.indexOf("-id") + 1];
      if (args[0]?.endsWith("containerd-shim-runc-v2") && id) shims.set(id, pid);
    } catch {
      // Gone meanwhile.
    }
  }
  let kib = 0;
  const visit = (pid: number) => {
    try {
      kib += Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  for (const id of containerIds) {
    const shim = shims.get(id);
    if (shim === undefined) throw new Error(`no shim found for container ${id}`);
    visit(shim);
  }
  return kib / 1024;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rawDockerRuns(count: number, tag: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const name = `paddock-bench-density-${tag}-${i}`;
    const args = ["run", "-d", "--name", name, "--runtime", "runsc", image, "sleep", "infinity"];
    samples.push((await timed(() => run("docker", args)))[0]);
    await run("docker", ["rm", "-f", name]);
  }
  return samples;
}

// An idle gVisor sandbox is ~82 host tasks (shim, gofer, sandbox and their threads): Linux's
// default kernel.pid_max of 32768 runs out near 350 of them, and creates then fail.
const tasksPerSandbox = 90;
const pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8"));
const tasksInUse = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[3]?.split("/")[1]);
if (tasksInUse + (idle + poolSize + 2) * tasksPerSandbox > pidMax) {
  console.error(
    `${idle} gVisor sandboxes need about ${(idle + poolSize) * tasksPerSandbox} host tasks; kernel.pid_max is ${pidMax}. Raise it first: sysctl -w kernel.pid_max=4194304`,
  );
  process.exit(1);
}

// Baseline on an empty machine first; memory is measured from before the server starts.
const rawEmpty = await rawDockerRuns(Math.min(n, 10), "empty");
await sleep(2000);
const before = availableMiB();
const t = await startTestServer({
  config: {
    secure_runtime: { type: "gvisor" },
    pools: { sizes: { [template]: poolSize }, max_total: poolSize, refill_concurrency: 1 },
  },
});
const v1 = (path: string, init?: RequestInit) => t.api(path, init);
const create = async (body: unknown): Promise<string> => {
  const response = await v1("/v1/sandboxes", { method: "POST", body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`create answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
};
const poolReady = async () => {
  while ((await t.server.stack.pools.readyCount(template)) < poolSize) await sleep(100);
};
const coldBody = { image: { uri: image }, entrypoint: ["sleep", "infinity"] };

const ids: string[] = [];
try {
  // Fill: `idle` sandboxes that stay idle, created a few at a time.
  const [fillMs] = await timed(async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: fillConcurrency }, async () => {
        while (next < idle) {
          next++;
          ids.push(await create(coldBody));
          if (ids.length % 50 === 0) console.log(`${ids.length} idle sandboxes`);
        }
      }),
    );
  });
  await poolReady();
  await sleep(10_000); // let the new sandboxes settle (page cache, lazy allocations)
  const total = idle + poolSize;
  const perSandboxMiB = (before - availableMiB()) / total;
  const { stdout } = await run("docker", ["inspect", "-f", "{{.Id}}", ...ids]);
  const pssPerSandboxMiB = attributedPssMiB(stdout.trim().split("\n")) / idle;

  // Creates at this density: each timed on its own, each sandbox deleted before the next.
  const warm: number[] = [];
  const cold: number[] = [];
  for (let i = 0; i < n; i++) {
    await poolReady();
    const [warmMs, warmId] = await timed(() => create({ extensions: { poolRef: template } }));
    warm.push(warmMs);
    await v1(`/v1/sandboxes/${warmId}`, { method: "DELETE" });
    const [coldMs, coldId] = await timed(() => create(coldBody));
    cold.push(coldMs);
    await v1(`/v1/sandboxes/${coldId}`, { method: "DELETE" });
  }
  const rawDense = await rawDockerRuns(Math.min(n, 10), "dense");

  const rows: Row[] = [
    {
      name: `warm create → Running at ${total} sandboxes (gvisor)`,
      subject: summarize(warm),
      baselineName: `docker run -d (runsc) at ${total}`,
      baseline: summarize(rawDense),
    },
    {
      name: `cold create → Running at ${total} sandboxes (gvisor)`,
      subject: summarize(cold),
      baselineName: `docker run -d (runsc) at ${total}`,
      baseline: summarize(rawDense),
    },
  ];
  console.log(markdownTable(rows));
  console.log(`${total} idle gVisor sandboxes: ${perSandboxMiB.toFixed(1)} MiB of host memory each`);
  console.log(`PSS of each idle sandbox's host processes: ${pssPerSandboxMiB.toFixed(1)} MiB`);
  console.log(
    `filled in ${(fillMs / 1000).toFixed(1)} s; docker run -d on an empty host: p50 ${summarize(rawEmpty).p50.toFixed(1)} ms`,
  );
  writeResults("density", rows, {
    idle,
    total,
    perSandboxMiB,
    pssPerSandboxMiB,
    fillSeconds: fillMs / 1000,
    rawEmpty: summarize(rawEmpty),
  });
} finally {
  // Clean up whatever happened: delete a few at a time, then the server takes the rest.
  let next = 0;
  await Promise.all(
    Array.from({ length: fillConcurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++];
        await v1(`/v1/sandboxes/${id}`, { method: "DELETE" }).catch(() => undefined);
      }
    }),
  );
  await t.dispose();
}
