/**
 * The control plane: `run echo hi` (p50, p99) against `docker exec` of the same command in the
 * same sandbox and run, under gVisor and runc, back to back and paced (one call every 50 ms, as
 * a client that reads each answer before the next call does); requests per second of
 * `GET /sandboxes/{id}`.
 *   node --conditions=@paddock/source --import tsx bench/api/run.ts   (BENCH_N=100 by default)
 */
import { startTestServer } from "../../packages/server/src/testing.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 100);
const rows: Row[] = [];
const throughput: Record<string, number> = {};

for (const secure of ["gvisor", "runc"] as const) {
  const t = await startTestServer({
    // Rate limits counted but out of reach: 100 commands per 10 s by default, and a 429 answers in 2 ms.
    config: {
      secure_runtime: { type: secure === "gvisor" ? "gvisor" : "" },
      rate_limits: { commands_per_key: 1_000_000, commands_per_account: 1_000_000 },
    },
  });
  const json = { "content-type": "application/json" };
  const account = { email: `bench-${secure}@example.com`, password: "benchmark password" };
  await fetch(`${t.url}/auth/signup`, { method: "POST", headers: json, body: JSON.stringify(account) });
  const { token } = (await (
    await fetch(`${t.url}/auth/login`, { method: "POST", headers: json, body: JSON.stringify(account) })
  ).json()) as {
    token: string;
  };
  const auth = { authorization: `Bearer ${token}` };
  const { id } = (await (
    await fetch(`${t.url}/sandboxes`, {
      method: "POST",
      headers: { ...auth, ...json },
      body: JSON.stringify({ template: "ubuntu" }),
    })
  ).json()) as { id: string };

  const runEchoHi = async () =>
    (
      await timed(async () => {
        const answer = await fetch(`${t.url}/sandboxes/${id}/run`, {
          method: "POST",
          headers: { ...auth, ...json },
          body: '{"command":"echo hi"}',
        });
        if (answer.status !== 200) throw new Error(`run failed: ${answer.status}`);
        return answer.json();
      })
    )[0];
  const viaApi: number[] = [];
  const viaDocker: number[] = [];
  for (let i = 0; i < n; i++) {
    viaApi.push(await runEchoHi());
    if (i < Math.max(20, n / 4))
      viaDocker.push((await timed(() => run("docker", ["exec", id, "echo", "hi"])))[0]);
  }
  // Paced: execd starts the next command's shell after each answer; a client that pauses between
  // calls never waits for it, one that calls back to back shares the CPU with it.
  const paced: number[] = [];
  for (let i = 0; i < n; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    paced.push(await runEchoHi());
  }
  rows.push({
    name: `run echo hi, control plane, back to back (${secure})`,
    subject: summarize(viaApi),
    baselineName: "docker exec",
    baseline: summarize(viaDocker),
  });
  rows.push({
    name: `run echo hi, control plane, every 50 ms (${secure})`,
    subject: summarize(paced),
    baselineName: "docker exec",
    baseline: summarize(viaDocker),
  });

  // Requests per second of GET /sandboxes/{id}, 16 at a time for 3 s.
  let done = 0;
  const until = Date.now() + 3000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < until) {
        await (await fetch(`${t.url}/sandboxes/${id}`, { headers: auth })).arrayBuffer();
        done++;
      }
    }),
  );
  throughput[`GET /sandboxes/{id} requests/s (${secure})`] = done / 3;
  await t.dispose();
}

console.log(markdownTable(rows));
for (const [name, value] of Object.entries(throughput)) console.log(`${name}: ${value.toFixed(0)}`);
writeResults("api", rows, { n, throughput });
