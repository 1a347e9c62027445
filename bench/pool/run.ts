/**
 * Warm pools through the /v1 API (extensions.poolRef) against raw `docker run -d` of the same
 * image in the same run, under gVisor: warm create, cold create, a burst of 50 creates served by a
 * pool of 50, and host memory per idle sandbox.
 *   node --conditions=@paddock/source --import tsx bench/pool/run.ts   (BENCH_N=50 by default)
 */
import { readFileSync } from "node:fs";
import { startTestServer } from "../../packages/server/src/testing.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 50);
const template = "ubuntu";
const image = `paddock/template-${template}:latest`;
const availableMiB = () =>
  Number(/MemAvailable:\s+(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1]) / 1024;

// Raw baseline first, on a quiet machine: docker run -d of the same image, same runtime.
const raw: number[] = [];
for (let i = 0; i < Math.min(n, 30); i++) {
  const name = `paddock-bench-raw-${i}`;
  raw.push(
    (
      await timed(() =>
        run("docker", ["run", "-d", "--name", name, "--runtime", "runsc", image, "sleep", "infinity"]),
      )
    )[0],
  );
  await run("docker", ["rm", "-f", name]);
}

const before = availableMiB();
const t = await startTestServer({
  config: {
    secure_runtime: { type: "gvisor" },
    pools: { sizes: { [template]: n }, max_total: n, refill_concurrency: 2 },
  },
});
const create = (body: unknown) =>
  t
    .api("/v1/sandboxes", { method: "POST", body: JSON.stringify(body) })
    .then((r) => r.json() as Promise<{ id: string }>);
const poolReady = async () => {
  for (;;) {
    if ((await t.server.stack.pools.readyCount(template)) >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};
const rows: Row[] = [];

// Density: memory of n idle warm sandboxes (measured from before the server started).
await poolReady();
await new Promise((resolve) => setTimeout(resolve, 5000));
const perSandboxMiB = (before - availableMiB()) / n;

// Warm creates, one after another (the pool refills behind them).
const warm: number[] = [];
const ids: string[] = [];
for (let i = 0; i < Math.min(n, 20); i++) {
  const [ms, sandbox] = await timed(() => create({ extensions: { poolRef: template } }));
  warm.push(ms);
  ids.push(sandbox.id);
}
await Promise.all(ids.splice(0).map((id) => t.api(`/v1/sandboxes/${id}`, { method: "DELETE" })));

// Warm creates through the control plane (an account, a session, a template).
const account = { email: "bench@example.com", password: "benchmark password" };
await fetch(`${t.url}/auth/signup`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(account),
});
const { token } = (await (
  await fetch(`${t.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(account),
  })
).json()) as { token: string };
const viaControlPlane: number[] = [];
await poolReady();
for (let i = 0; i < Math.min(n, 20); i++) {
  const [ms, response] = await timed(() =>
    fetch(`${t.url}/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ template }),
    }),
  );
  viaControlPlane.push(ms);
  const { id } = (await response.json()) as { id: string };
  ids.push(id);
}
await Promise.all(ids.splice(0).map((id) => t.api(`/v1/sandboxes/${id}`, { method: "DELETE" })));

// Burst: n creates at once from a full pool.
await poolReady();
const [burstMs, burst] = await timed(() =>
  Promise.all(Array.from({ length: n }, () => create({ extensions: { poolRef: template } }))),
);
await t.server.stack.pools.stop();
await Promise.all(burst.map((sandbox) => t.api(`/v1/sandboxes/${sandbox.id}`, { method: "DELETE" })));

// Cold creates (pools stopped and empty).
const cold: number[] = [];
for (let i = 0; i < Math.min(n, 20); i++) {
  const [ms, sandbox] = await timed(() =>
    create({ image: { uri: image }, entrypoint: ["sleep", "infinity"] }),
  );
  cold.push(ms);
  await t.api(`/v1/sandboxes/${sandbox.id}`, { method: "DELETE" });
}
await t.dispose();

rows.push({
  name: "warm create → Running (gvisor, /v1)",
  subject: summarize(warm),
  baselineName: "docker run -d (runsc)",
  baseline: summarize(raw),
});
rows.push({
  name: "warm create → Running (gvisor, control plane)",
  subject: summarize(viaControlPlane),
  baselineName: "docker run -d (runsc)",
  baseline: summarize(raw),
});
rows.push({
  name: "cold create → Running (gvisor, /v1)",
  subject: summarize(cold),
  baselineName: "docker run -d (runsc)",
  baseline: summarize(raw),
});
console.log(markdownTable(rows));
console.log(`burst of ${n} creates from a pool of ${n}: all Running in ${burstMs.toFixed(0)} ms`);
console.log(`host memory per idle gVisor sandbox (${n} warm): ${perSandboxMiB.toFixed(1)} MiB`);
writeResults("pool", rows, { n, burstMs, perSandboxMiB });
