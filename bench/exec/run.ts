/**
 * A command and its bytes, under gVisor and runc, each beside its raw baseline in the same
 * sandbox and run (the figures of issue 28): `echo hi` through the control plane
 * (`POST /sandboxes/{id}/run`, back to back and 50 ms apart, p50/p99) against `docker exec`; stdout streaming
 * from execd against `docker exec`; upload and download through execd against `docker cp`;
 * and execd's idle memory. Throughputs are the median of three runs, each interleaved with its
 * baseline, so a busy moment of the machine falls on both sides.
 *   node --conditions=@paddock/source --import tsx bench/exec/run.ts   (BENCH_N=100 by default)
 * BENCH_RUNTIMES (`gvisor,runc`) and BENCH_PARTS (`echo,stream,files`) run a part of it.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { type IncomingMessage, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXECD_PORT, EXECD_TOKEN_HEADER, SseParser } from "@paddock/common";
import { startTestServer } from "../../packages/server/src/testing.js";
import { markdownTable, type Row, run, type Summary, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 100);
const runtimes = (process.env.BENCH_RUNTIMES ?? "gvisor,runc").split(",");
const parts = new Set((process.env.BENCH_PARTS ?? "echo,stream,files").split(","));
const streamBytes = 200 * 2 ** 20;
const fileBytes = 256 * 2 ** 20;
const rows: Row[] = [];
const notes: Record<string, unknown> = {};
const mibPerSecond = (bytes: number, ms: number) => bytes / 2 ** 20 / (ms / 1000);
/** Throughputs (one per run) as a summary, so they sit in the same table. */
const throughputs = (values: number[]): Summary => summarize(values);

/**
 * Reads a response to its end and counts its bytes, over `node:http`: fetch's body stream costs
 * the client more CPU than `docker exec`'s Go client spends, and on two cores that would be
 * measured as execd's.
 */
function bytesOf(url: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: body === undefined ? "GET" : "POST", headers }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}`));
      let bytes = 0;
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.on("end", () => resolve(bytes)).on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Uploads `data` to execd as one multipart file part, written straight to the socket: fetch with
 * FormData tops out near 120 MiB/s on this machine and would measure the client, not execd.
 */
async function upload(url: string, token: string, path: string, data: Buffer): Promise<void> {
  const boundary = "paddock-bench-boundary";
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify({ path })}\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="payload"\r\n` +
      "content-type: application/octet-stream\r\n\r\n",
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: {
        [EXECD_TOKEN_HEADER]: token,
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": head.length + data.length + tail.length,
      },
    });
    req.on("response", resolve).on("error", reject);
    req.write(head);
    req.write(data);
    req.end(tail);
  });
  response.resume();
  if (response.statusCode !== 200) throw new Error(`upload failed: ${response.statusCode}`);
}

for (const secure of (["gvisor", "runc"] as const).filter((name) => runtimes.includes(name))) {
  // Rate limits counted but out of reach: back to back meets 429s at the default 100 per 10 s.
  const t = await startTestServer({
    config: {
      secure_runtime: { type: secure === "gvisor" ? "gvisor" : "" },
      rate_limits: { commands_per_key: 1_000_000, commands_per_account: 1_000_000 },
    },
  });
  const session = { authorization: `Bearer ${await t.account(`bench-exec-${secure}@example.com`)}` };
  const json = { "content-type": "application/json" };
  const created = await fetch(`${t.url}/sandboxes`, {
    method: "POST",
    headers: { ...session, ...json },
    body: JSON.stringify({ template: "ubuntu" }),
  });
  const { id } = (await created.json()) as { id: string };
  // The bytes go to a sandbox of its own, as before: the image alone, no memory or disk limit.
  const { stack } = t.server;
  const sandbox = await stack.sandboxes.create({
    image: { uri: "paddock/base:bookworm" },
    entrypoint: ["sleep", "infinity"],
  });
  const { host } = await stack.sandboxes.target(sandbox.id, EXECD_PORT);
  const base = `http://${host}:${EXECD_PORT}`;
  const headers = { [EXECD_TOKEN_HEADER]: stack.sandboxes.tokens(sandbox.id).execd, ...json };
  const command = (text: string) =>
    fetch(`${base}/command`, { method: "POST", headers, body: JSON.stringify({ command: text }) });

  // Idle memory first, before any work has grown execd's heap.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const parser = new SseParser();
  const probe = await (
    await command(
      "for f in /proc/[0-9]*; do [ $f = /proc/1 ] && continue; if tr '\\0' ' ' < $f/cmdline 2>/dev/null | grep -q '/opt/paddock/exec[d].js'; then grep VmRSS $f/status; fi; done",
    )
  ).text();
  const rss = parser
    .push(probe)
    .concat(parser.end())
    .filter((event) => event.type === "stdout")
    .map((event) => String(event.text))
    .join("");
  notes[`execd idle RSS MiB (${secure})`] = Number(/VmRSS:\s+(\d+)/.exec(rss)?.[1]) / 1024;

  if (parts.has("echo")) {
    const echoHi = async () => {
      const answer = await fetch(`${t.url}/sandboxes/${id}/run`, {
        method: "POST",
        headers: { ...session, ...json },
        body: '{"command":"echo hi"}',
      });
      const result = (await answer.json()) as { stdout?: string };
      if (answer.status !== 200 || result.stdout !== "hi\n") throw new Error(`run failed: ${answer.status}`);
    };
    for (let i = 0; i < 5; i++) await echoHi(); // the warm shell exists from the first command on
    // Back to back in four blocks, then paced 50 ms apart (a client that reads each answer
    // before its next call), a few `docker exec` after each, so load changes hit both sides.
    const backToBack: number[] = [];
    const paced: number[] = [];
    const viaDocker: number[] = [];
    // The CPU a command back to back costs: the sandbox's (under gVisor, its Sentry and gofer)
    // from its cgroup, and this process's (the server and the client).
    const { stdout: containerId } = await run("docker", ["inspect", "-f", "{{.Id}}", id]);
    const sandboxCpuMs = () =>
      Number(readFileSync(`/sys/fs/cgroup/cpuacct/docker/${containerId.trim()}/cpuacct.usage`, "utf8")) / 1e6;
    const cpu = { backToBack: { sandbox: 0, serverAndClient: 0 }, paced: { sandbox: 0, serverAndClient: 0 } };
    for (let block = 0; block < 8; block++) {
      const [sandboxBefore, processBefore] = [sandboxCpuMs(), process.cpuUsage()];
      for (let i = 0; i < n / 4; i++) {
        if (block < 4) backToBack.push((await timed(echoHi))[0]);
        else {
          await new Promise((resolve) => setTimeout(resolve, 50));
          paced.push((await timed(echoHi))[0]);
        }
      }
      const used = process.cpuUsage(processBefore);
      const pace = block < 4 ? cpu.backToBack : cpu.paced;
      pace.sandbox += sandboxCpuMs() - sandboxBefore;
      pace.serverAndClient += (used.user + used.system) / 1000;
      for (let i = 0; i < Math.max(5, n / 32); i++)
        viaDocker.push((await timed(() => run("docker", ["exec", id, "echo", "hi"])))[0]);
    }
    console.error(`${secure}: echo hi done`);
    for (const [pace, times] of [
      ["back to back", backToBack],
      ["50 ms apart", paced],
    ] as const) {
      const used = pace === "back to back" ? cpu.backToBack : cpu.paced;
      notes[`CPU ms per echo hi ${pace}, sandbox / server and client (${secure})`] = [
        used.sandbox / times.length,
        used.serverAndClient / times.length,
      ].map((ms) => Number(ms.toFixed(2)));
    }
    for (const [pace, times] of [
      ["back to back", backToBack],
      ["50 ms apart", paced],
    ] as const) {
      rows.push({
        name: `echo hi, control plane, ${pace} (${secure})`,
        subject: summarize(times),
        baselineName: "docker exec",
        baseline: summarize(viaDocker),
      });
    }
  }

  // Printable bytes: NULs would be escaped six-fold in SSE's JSON and measure the escaping.
  if (parts.has("stream")) {
    const stream = `head -c ${streamBytes} /dev/zero | tr '\\0' a`;
    const streamed: number[] = [];
    const dockerStreamed: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [ms, bytes] = await timed(() =>
        bytesOf(`${base}/command`, headers, JSON.stringify({ command: stream })),
      );
      if (bytes < streamBytes) throw new Error(`the stream brought ${bytes} bytes`);
      streamed.push(mibPerSecond(streamBytes, ms));
      const [dockerMs] = await timed(() =>
        run("bash", ["-c", `docker exec ${sandbox.id} sh -c "${stream}" > /dev/null`]),
      );
      dockerStreamed.push(mibPerSecond(streamBytes, dockerMs));
    }
    console.error(`${secure}: streaming done`);
    rows.push({
      name: `stdout stream 200 MiB, execd (${secure})`,
      unit: "MiB/s",
      subject: throughputs(streamed),
      baselineName: "docker exec",
      baseline: throughputs(dockerStreamed),
    });
  }

  if (parts.has("files")) {
    const dir = mkdtempSync(join(tmpdir(), "paddock-bench-"));
    const local = join(dir, "payload");
    writeFileSync(local, Buffer.alloc(fileBytes, 97));
    const payload = readFileSync(local);
    const uploads: number[] = [];
    const downloads: number[] = [];
    const cpIn: number[] = [];
    const cpOut: number[] = [];
    // Both sides write where the sandbox sees the file: under gVisor, /tmp is the sandbox's own
    // tmpfs, so a `docker cp` there lands on the host's disk, out of the sandbox's sight.
    const target = "/root/payload";
    for (let i = 0; i < 3; i++) {
      const [uploadMs] = await timed(() =>
        upload(`${base}/files/upload`, headers[EXECD_TOKEN_HEADER], target, payload),
      );
      uploads.push(mibPerSecond(fileBytes, uploadMs));
      const [cpInMs] = await timed(() => run("docker", ["cp", local, `${sandbox.id}:${target}-cp`]));
      cpIn.push(mibPerSecond(fileBytes, cpInMs));
      const [downloadMs, bytes] = await timed(async () =>
        bytesOf(`${base}/files/download?path=${target}`, headers),
      );
      if (bytes !== fileBytes) throw new Error(`the download brought ${bytes} bytes`);
      downloads.push(mibPerSecond(fileBytes, downloadMs));
      rmSync(join(dir, "back"), { force: true });
      const [cpOutMs] = await timed(() =>
        run("docker", ["cp", `${sandbox.id}:${target}-cp`, join(dir, "back")]),
      );
      if (statSync(join(dir, "back")).size !== fileBytes)
        throw new Error("docker cp copied a different size");
      cpOut.push(mibPerSecond(fileBytes, cpOutMs));
    }
    rmSync(dir, { recursive: true, force: true });
    rows.push({
      name: `upload 256 MiB, execd (${secure})`,
      unit: "MiB/s",
      subject: throughputs(uploads),
      baselineName: "docker cp in",
      baseline: throughputs(cpIn),
    });
    rows.push({
      name: `download 256 MiB, execd (${secure})`,
      unit: "MiB/s",
      subject: throughputs(downloads),
      baselineName: "docker cp out",
      baseline: throughputs(cpOut),
    });
  }

  await t.dispose();
}

console.log(markdownTable(rows));
console.log("\n(throughput rows: a higher ratio is better)");
for (const [name, value] of Object.entries(notes)) console.log(`${name}: ${JSON.stringify(value)}`);
writeResults("exec", rows, { n, notes });
