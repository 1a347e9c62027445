/**
 * Replicas: three `paddock serve` processes on one PostgreSQL and one Docker engine (gVisor),
 * with the load spread over one, two, then all three of them, in one run:
 * - requests per second of `GET /sandboxes/{id}` (32 concurrent, keep-alive, 5 rounds of 3 s, with
 *   the warm pool full so no refill competes), against the same
 *   lookup made raw: the Docker Engine API's `GET /containers/{id}/json` on the sandbox's container;
 * - creates per second from warm pools (a pool of 12, 4 concurrent), against `docker run -d` of the
 *   same image, 4 concurrent.
 * The load generator shares the machine's cores with the replicas it measures.
 *   npm run build && node --conditions=@paddock/source --import tsx bench/replicas/run.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestDatabase } from "@paddock/db";
import { type PaddockProcess, serve, stop, writeServerConfig } from "../../test/support/paddock-process.js";
import { markdownTable, type Row, run, summarize, writeResults } from "../lib.js";

const template = "ubuntu";
const image = `paddock/template-${template}:latest`;
const poolSize = 12;
const concurrency = 32;
const createConcurrency = 4;
const seconds = 3;
const rounds = 5;

/** Calls `work` from `workers` loops for `ms`; returns completed calls per second. */
async function throughput(workers: number, ms: number, work: (worker: number) => Promise<unknown>) {
  const until = Date.now() + ms;
  let done = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (Date.now() < until) {
        await work(worker);
        done++;
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** Runs `items` jobs at most `limit` at a time; returns jobs per second. */
async function perSecond(items: number, limit: number, job: (i: number) => Promise<unknown>) {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items) await job(next++);
    }),
  );
  return items / (Number(process.hrtime.bigint() - start) / 1e9);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
function get(options: http.RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request({ agent, ...options }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    request.on("error", reject);
    request.end();
  });
}
const dockerAgent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const inspect = (id: string) =>
  new Promise<void>((resolve, reject) => {
    http
      .get(
        { agent: dockerAgent, socketPath: "/var/run/docker.sock", path: `/containers/${id}/json` },
        (response) => {
          response.resume();
          response.on("end", resolve);
        },
      )
      .on("error", reject);
  });

const database = await createTestDatabase("postgres");
const dir = mkdtempSync(join(tmpdir(), "paddock-bench-replicas-"));
const { file: configFile, instance } = writeServerConfig(dir, database.url, [
  "[secure_runtime]",
  'type = "gvisor"',
  "[pools]",
  `sizes = { ${template} = ${poolSize} }`,
  `max_total = ${poolSize}`,
]);
const replicas: PaddockProcess[] = [];
for (let i = 0; i < 3; i++) replicas.push(await serve(configFile));
const urls = replicas.map((replica) => new URL(replica.url));

const json = { "content-type": "application/json" };
const account = JSON.stringify({ email: "bench@example.com", password: "benchmark password" });
await fetch(`${replicas[0]?.url}/auth/signup`, { method: "POST", headers: json, body: account });
const { token } = (await (
  await fetch(`${replicas[0]?.url}/auth/login`, { method: "POST", headers: json, body: account })
).json()) as { token: string };
const auth = { authorization: `Bearer ${token}` };
const create = async (replica: number) => {
  const response = await fetch(`${replicas[replica]?.url}/sandboxes`, {
    method: "POST",
    headers: { ...auth, ...json },
    body: JSON.stringify({ template }),
  });
  if (response.status !== 201)
    throw new Error(`create answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
};
const remove = (id: string) =>
  fetch(`${replicas[0]?.url}/sandboxes/${id}`, { method: "DELETE", headers: auth });
const db = await database.open();
const poolReady = async () => {
  for (;;) {
    const row = await db.db
      .selectFrom("sandboxes")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("pooled_for", "=", template)
      .where("state", "=", "Running")
      .executeTakeFirst();
    if (Number(row?.count ?? 0) >= poolSize) return;
    await sleep(250);
  }
};

// One sandbox to look up, and its container for the raw baseline.
await poolReady();
const target = await create(0);
await poolReady(); // its refill done before the baseline runs
const rawLookups: number[] = [];
for (let i = 0; i < rounds; i++)
  rawLookups.push(await throughput(concurrency, seconds * 1000, () => inspect(target)));

const rawCreates: number[] = [];
for (let round = 0; round < rounds; round++) {
  const names = Array.from({ length: poolSize }, (_, i) => `paddock-bench-replicas-${round}-${i}`);
  rawCreates.push(
    await perSecond(poolSize, createConcurrency, (i) =>
      run("docker", [
        "run",
        "-d",
        "--name",
        names[i] ?? "",
        "--runtime",
        "runsc",
        image,
        "sleep",
        "infinity",
      ]),
    ),
  );
  await run("docker", ["rm", "-f", ...names]);
}

const rows: Row[] = [];
for (const count of [1, 2, 3]) {
  // Lookups on a quiet machine: the pool's refills after the last round of creates are done.
  await poolReady();
  const lookups: number[] = [];
  for (let i = 0; i < rounds; i++) {
    lookups.push(
      await throughput(concurrency, seconds * 1000, async (worker) => {
        const url = urls[worker % count] as URL;
        const status = await get({
          host: url.hostname,
          port: url.port,
          path: `/sandboxes/${target}`,
          headers: auth,
        });
        if (status !== 200) throw new Error(`GET answered ${status}`);
      }),
    );
  }
  rows.push({
    name: `GET /sandboxes/{id}, ${count} replica${count > 1 ? "s" : ""}`,
    subject: summarize(lookups),
    baselineName: "Docker API GET /containers/{id}/json",
    baseline: summarize(rawLookups),
    unit: "req/s",
  });

  const creates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await poolReady();
    const ids: string[] = [];
    creates.push(
      await perSecond(poolSize, createConcurrency, async (i) => ids.push(await create(i % count))),
    );
    await Promise.all(ids.map(remove));
  }
  rows.push({
    name: `warm creates, ${count} replica${count > 1 ? "s" : ""}`,
    subject: summarize(creates),
    baselineName: "docker run -d (runsc)",
    baseline: summarize(rawCreates),
    unit: "creates/s",
  });
}

await remove(target);
for (const replica of replicas) await stop(replica.child, "SIGTERM");
const { stdout } = await run("docker", ["ps", "-aq", "--filter", `label=paddock.instance=${instance}`]);
if (stdout.trim()) await run("docker", ["rm", "-f", ...stdout.trim().split("\n")]);
await db.close();
await database.drop();
rmSync(dir, { recursive: true, force: true });
agent.destroy();
dockerAgent.destroy();

console.log(markdownTable(rows));
writeResults("replicas", rows, { poolSize, concurrency, createConcurrency, seconds, rounds });
