/**
 * Every template whose image is built: create → Running through the control plane, cold and from a
 * warm pool of one, against `docker run -d` of the same image, entrypoint and CPU and memory limits
 * under runsc in the same run (waiting, as Paddock does, for the template's ready ports); and each image's size.
 *   node --conditions=@paddock/source --import tsx bench/templates/run.ts
 * BENCH_N=5 creates of each kind by default; BENCH_TEMPLATES=python,node limits the templates.
 */
import { resolve } from "node:path";
import { parseCpuMillis, parseMemoryBytes } from "../../packages/common/src/quantities.js";
import { waitForHttp } from "../../packages/runtime/src/readiness.js";
import { loadTemplates, type Template } from "../../packages/runtime/src/templates/manifests.js";
import { startTestServer, type TestServer } from "../../packages/server/src/testing.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 5);
const only = process.env.BENCH_TEMPLATES?.split(",");
const all = [...loadTemplates(resolve("templates")).values()].filter(
  (template) => !only || only.includes(template.id),
);
const built: Template[] = [];
const sizes: Record<string, number> = {};
for (const template of all) {
  const inspected = await run("docker", ["image", "inspect", "--format", "{{.Size}}", template.image]).catch(
    () => undefined,
  );
  if (!inspected) {
    console.log(`${template.id}: image not built, skipped (make templates)`);
    continue;
  }
  built.push(template);
  sizes[template.id] = Number(inspected.stdout.trim()) / 2 ** 20;
}

/** Raw baseline: docker run -d of the template's image, entrypoint and limits, then its ready ports. */
async function rawCreate(template: Template, name: string): Promise<void> {
  const [entry, ...args] = template.entrypoint;
  const { cpu, memory } = template.resourceLimits;
  await run("docker", [
    "run",
    "-d",
    "--name",
    name,
    "--runtime",
    "runsc",
    ...(cpu ? ["--cpus", String((parseCpuMillis(cpu) ?? 1000) / 1000)] : []),
    ...(memory ? ["--memory", String(parseMemoryBytes(memory))] : []),
    "--entrypoint",
    entry as string,
    template.image,
    ...args,
  ]);
  const { stdout } = await run("docker", ["inspect", "--format", "{{.NetworkSettings.IPAddress}}", name]);
  for (const port of template.ports) {
    if (port.ready) {
      await waitForHttp(`http://${stdout.trim()}:${port.port}${port.ready}`, {
        timeoutMs: 120_000,
        intervalMs: 50,
        accept: (status) => status < 400,
      });
    }
  }
}

async function createVia(t: TestServer, token: string, template: string): Promise<string> {
  const response = await fetch(`${t.url}/sandboxes`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ template }),
  });
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`create ${template}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

async function kill(t: TestServer, token: string, id: string): Promise<void> {
  await fetch(`${t.url}/sandboxes/${id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${token}` },
  });
}

const rows: Row[] = [];
for (const template of built) {
  // Raw baseline first, on a quiet machine.
  const raw: number[] = [];
  for (let i = 0; i < n; i++) {
    const name = `paddock-bench-template-${i}`;
    raw.push((await timed(() => rawCreate(template, name)))[0]);
    await run("docker", ["rm", "-f", name]);
  }

  // Cold creates: no pool.
  const cold: number[] = [];
  let t = await startTestServer({ config: { secure_runtime: { type: "gvisor" } } });
  let token = await t.account(`bench-cold-${template.id}@example.com`);
  for (let i = 0; i < n; i++) {
    const [ms, id] = await timed(() => createVia(t, token, template.id));
    cold.push(ms);
    await kill(t, token, id);
  }
  await t.dispose();

  // Warm creates: a pool of one, refilled between creates.
  const warm: number[] = [];
  t = await startTestServer({
    config: { secure_runtime: { type: "gvisor" }, pools: { sizes: { [template.id]: 1 }, max_total: 1 } },
  });
  token = await t.account(`bench-warm-${template.id}@example.com`);
  for (let i = 0; i < n; i++) {
    while ((await t.server.stack.pools.readyCount(template.id)) < 1)
      await new Promise((r) => setTimeout(r, 100));
    const [ms, id] = await timed(() => createVia(t, token, template.id));
    warm.push(ms);
    await kill(t, token, id);
  }
  await t.server.stack.pools.stop();
  await t.dispose();

  const baseline = summarize(raw);
  const baselineName = `docker run -d (runsc)${template.ports.some((port) => port.ready) ? " + ready ports" : ""}`;
  rows.push({
    name: `${template.id}: cold create → Running`,
    subject: summarize(cold),
    baselineName,
    baseline,
  });
  rows.push({
    name: `${template.id}: warm create → Running`,
    subject: summarize(warm),
    baselineName,
    baseline,
  });
  console.log(markdownTable(rows.slice(-2)));
}

console.log(markdownTable(rows));
const sizeTable = [
  "| template | image size |",
  "|---|---|",
  ...built.map((template) => `| ${template.id} | ${sizes[template.id]?.toFixed(0)} MiB |`),
];
console.log(sizeTable.join("\n"));
writeResults("templates", rows, { n, imageSizesMiB: sizes });
