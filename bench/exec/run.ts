/**
 * execd against `docker exec` / `docker cp`, same sandbox, same run, under gVisor and runc:
 * round trip of `echo hi`, stdout streaming throughput, upload and download throughput, and
 * execd's idle memory.
 *   node --conditions=@paddock/source --import tsx bench/exec/run.ts   (BENCH_N=100 by default)
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { type IncomingMessage, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXECD_PORT, EXECD_TOKEN_HEADER, SseParser } from "@paddock/common";
import { openTestStack } from "../../packages/runtime/src/testing/index.js";
import { markdownTable, type Row, run, type Summary, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 100);
const streamBytes = 200 * 2 ** 20;
const fileBytes = 256 * 2 ** 20;
const rows: Row[] = [];
const notes: Record<string, unknown> = {};
const mibPerSecond = (bytes: number, ms: number) => bytes / 2 ** 20 / (ms / 1000);
/** A throughput as a one-sample "summary" so it sits in the same table. */
const single = (value: number): Summary => ({ n: 1, p50: value, p95: value, p99: value, mean: value });

async function drain(response: Response): Promise<number> {
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
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

for (const secure of ["gvisor", "runc"] as const) {
  const t = await openTestStack({ secure });
  const sandbox = await t.stack.sandboxes.create({
    image: { uri: "paddock/base:bookworm" },
    entrypoint: ["sleep", "infinity"],
  });
  const { host } = await t.stack.sandboxes.target(sandbox.id, EXECD_PORT);
  const base = `http://${host}:${EXECD_PORT}`;
  const headers = {
    [EXECD_TOKEN_HEADER]: t.stack.sandboxes.tokens(sandbox.id).execd,
    "content-type": "application/json",
  };
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

  const execdSamples: number[] = [];
  const dockerSamples: number[] = [];
  for (let i = 0; i < n; i++) {
    execdSamples.push((await timed(async () => (await command("echo hi")).text()))[0]);
    if (i < Math.max(20, n / 4))
      dockerSamples.push((await timed(() => run("docker", ["exec", sandbox.id, "echo", "hi"])))[0]);
  }
  rows.push({
    name: `echo hi via execd (${secure})`,
    subject: summarize(execdSamples),
    baselineName: "docker exec",
    baseline: summarize(dockerSamples),
  });

  // Printable bytes: NULs would be escaped six-fold in SSE's JSON and measure the escaping.
  const stream = `head -c ${streamBytes} /dev/zero | tr '\\0' a`;
  const [streamMs] = await timed(async () => drain(await command(stream)));
  const [dockerStreamMs] = await timed(() =>
    run("bash", ["-c", `docker exec ${sandbox.id} sh -c "${stream}" > /dev/null`]),
  );
  rows.push({
    name: `stdout stream 200 MiB (${secure})`,
    unit: "MiB/s",
    subject: single(mibPerSecond(streamBytes, streamMs)),
    baselineName: "docker exec",
    baseline: single(mibPerSecond(streamBytes, dockerStreamMs)),
  });

  const dir = mkdtempSync(join(tmpdir(), "paddock-bench-"));
  const local = join(dir, "payload");
  writeFileSync(local, Buffer.alloc(fileBytes, 97));
  const [uploadMs] = await timed(() =>
    upload(`${base}/files/upload`, headers[EXECD_TOKEN_HEADER], "/tmp/payload", readFileSync(local)),
  );
  const [downloadMs] = await timed(async () =>
    drain(await fetch(`${base}/files/download?path=/tmp/payload`, { headers })),
  );
  const [cpInMs] = await timed(() => run("docker", ["cp", local, `${sandbox.id}:/tmp/payload-cp`]));
  const [cpOutMs] = await timed(() =>
    run("docker", ["cp", `${sandbox.id}:/tmp/payload-cp`, join(dir, "back")]),
  );
  if (statSync(join(dir, "back")).size !== fileBytes) throw new Error("docker cp copied a different size");
  rmSync(dir, { recursive: true, force: true });
  rows.push({
    name: `upload 256 MiB (${secure})`,
    unit: "MiB/s",
    subject: single(mibPerSecond(fileBytes, uploadMs)),
    baselineName: "docker cp in",
    baseline: single(mibPerSecond(fileBytes, cpInMs)),
  });
  rows.push({
    name: `download 256 MiB (${secure})`,
    unit: "MiB/s",
    subject: single(mibPerSecond(fileBytes, downloadMs)),
    baselineName: "docker cp out",
    baseline: single(mibPerSecond(fileBytes, cpOutMs)),
  });

  await t.dispose();
}

console.log(markdownTable(rows));
console.log("\n(throughput rows: a higher ratio is better)");
for (const [name, value] of Object.entries(notes)) console.log(`${name}: ${JSON.stringify(value)}`);
writeResults("exec", rows, { n, notes });
