/**
 * The clients users install, against a real `paddock serve` process, in one run:
 * - `run echo hi` per call through the Python SDK (sync and async), the TypeScript SDK, raw HTTP
 *   from each language (httpx, fetch), and `docker exec` of the same command in the same sandbox;
 * - `paddock cp` of 256 MiB into and out of a sandbox against `docker cp`.
 *   node --conditions=@paddock/source --import tsx bench/clients/run.ts   (BENCH_N=200 by default)
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Paddock, Sandbox } from "../../packages/sdk/src/index.js";
import {
  markdownTable,
  type Row,
  run,
  type Summary,
  servePaddock,
  summarize,
  timed,
  writeResults,
} from "../lib.js";

const n = Number(process.env.BENCH_N ?? 200);
const fileBytes = 256 * 2 ** 20;
const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "packages", "cli", "bin", "paddock.js");
const python = "/usr/bin/python3";

const { baseUrl, stop } = await servePaddock("clients");

try {
  await Paddock.signup("bench@example.com", "benchmark password", { baseUrl });
  const { client } = await Paddock.login("bench@example.com", "benchmark password", { baseUrl });
  const apiKey = (await client.keys.create({ name: "bench" })).secret;
  const sandbox = await Sandbox.create({ template: "python", apiKey, baseUrl });
  const rows: Row[] = [];

  const rawFetch = async () => {
    const response = await fetch(`${baseUrl}/sandboxes/${sandbox.id}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: '{"command":"echo hi"}',
    });
    if (((await response.json()) as { stdout: string }).stdout !== "hi\n")
      throw new Error("raw HTTP: unexpected output");
  };
  const sdk = async () => {
    if ((await sandbox.commands.run("echo hi")).stdout !== "hi\n") throw new Error("SDK: unexpected output");
  };
  const samples = async (call: () => Promise<unknown>) => {
    const durations: number[] = [];
    for (let i = 0; i < n; i++) durations.push((await timed(call))[0]);
    return summarize(durations);
  };
  // Interleaved in rounds, so drift over the run (page cache, CPU frequency) touches each alike.
  const fetchRounds: number[] = [];
  const sdkRounds: number[] = [];
  for (let i = 0; i < n; i++) {
    fetchRounds.push((await timed(rawFetch))[0]);
    sdkRounds.push((await timed(sdk))[0]);
  }
  const dockerExec = await samples(() => run("docker", ["exec", sandbox.id, "echo", "hi"]));
  const raw = summarize(fetchRounds);
  rows.push({
    name: "echo hi: raw HTTP (fetch)",
    subject: raw,
    baselineName: "docker exec",
    baseline: dockerExec,
  });
  rows.push({
    name: "echo hi: TypeScript SDK",
    subject: summarize(sdkRounds),
    baselineName: "raw HTTP (fetch)",
    baseline: raw,
  });

  // Python: one interpreter runs every call, so start-up is not counted.
  const pythonBench = `
import asyncio, json, sys, time, httpx, paddock
n, sandbox_id = int(sys.argv[1]), sys.argv[2]
def timed(call):
    started = time.perf_counter(); call(); return (time.perf_counter() - started) * 1000
with httpx.Client(base_url="${baseUrl}", headers={"authorization": "Bearer ${apiKey}"}) as http:
    raw = [timed(lambda: http.post(f"/sandboxes/{sandbox_id}/run", json={"command": "echo hi"}).json()) for _ in range(n)]
sandbox = paddock.Sandbox.connect(sandbox_id, api_key="${apiKey}", base_url="${baseUrl}")
sdk = [timed(lambda: sandbox.commands.run("echo hi")) for _ in range(n)]
async def run_async():
    box = await paddock.AsyncSandbox.connect(sandbox_id, api_key="${apiKey}", base_url="${baseUrl}")
    out = []
    for _ in range(n):
        started = time.perf_counter(); await box.commands.run("echo hi"); out.append((time.perf_counter() - started) * 1000)
    return out
print(json.dumps({"raw": raw, "sdk": sdk, "async": asyncio.run(run_async())}))
`;
  const { stdout } = await run(python, ["-c", pythonBench, String(n), sandbox.id], {
    env: { ...process.env, PYTHONPATH: join(root, "sdk-python", "src") },
    maxBuffer: 16 * 2 ** 20,
  });
  const py = JSON.parse(stdout) as { raw: number[]; sdk: number[]; async: number[] };
  const httpx: Summary = summarize(py.raw);
  rows.push({
    name: "echo hi: raw HTTP (httpx)",
    subject: httpx,
    baselineName: "docker exec",
    baseline: dockerExec,
  });
  rows.push({
    name: "echo hi: Python SDK",
    subject: summarize(py.sdk),
    baselineName: "raw HTTP (httpx)",
    baseline: httpx,
  });
  rows.push({
    name: "echo hi: Python SDK (async)",
    subject: summarize(py.async),
    baselineName: "raw HTTP (httpx)",
    baseline: httpx,
  });

  // paddock cp against docker cp, 256 MiB of random bytes each way, checked by hash.
  const dir = mkdtempSync(join(tmpdir(), "paddock-bench-cp-"));
  const local = join(dir, "payload");
  writeFileSync(local, randomBytes(fileBytes));
  const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
  const cliEnv = { ...process.env, PADDOCK_BASE_URL: baseUrl, PADDOCK_API_KEY: apiKey, XDG_CONFIG_HOME: dir };
  const [cpIn] = await timed(() =>
    run(process.execPath, [cli, "cp", local, `${sandbox.id}:/tmp/payload`], { env: cliEnv }),
  );
  const [cpOut] = await timed(() =>
    run(process.execPath, [cli, "cp", `${sandbox.id}:/tmp/payload`, join(dir, "back")], { env: cliEnv }),
  );
  const [dockerIn] = await timed(() => run("docker", ["cp", local, `${sandbox.id}:/tmp/payload-docker`]));
  const [dockerOut] = await timed(() =>
    run("docker", ["cp", `${sandbox.id}:/tmp/payload-docker`, join(dir, "docker-back")]),
  );
  if (digest(join(dir, "back")) !== digest(local) || digest(join(dir, "docker-back")) !== digest(local))
    throw new Error("a copy came back different");
  rmSync(dir, { recursive: true, force: true });
  const throughput = (ms: number): Summary => {
    const value = fileBytes / 2 ** 20 / (ms / 1000);
    return { n: 1, p50: value, p95: value, p99: value, mean: value };
  };
  rows.push({
    name: "paddock cp in, 256 MiB",
    unit: "MiB/s",
    subject: throughput(cpIn),
    baselineName: "docker cp in",
    baseline: throughput(dockerIn),
  });
  rows.push({
    name: "paddock cp out, 256 MiB",
    unit: "MiB/s",
    subject: throughput(cpOut),
    baselineName: "docker cp out",
    baseline: throughput(dockerOut),
  });

  await sandbox.kill();
  console.log(markdownTable(rows));
  console.log("\n(throughput rows: a higher ratio is better; the rest are latencies)");
  writeResults("clients", rows, { n });
} finally {
  await stop();
}
