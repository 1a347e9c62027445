import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export const run = promisify(execFile);

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

/** Nearest-rank percentiles of millisecond samples. */
export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { n: sorted.length, p50: at(50), p95: at(95), p99: at(99), mean };
}

export async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const start = process.hrtime.bigint();
  const result = await work();
  return [Number(process.hrtime.bigint() - start) / 1e6, result];
}

export interface Row {
  name: string;
  subject: Summary;
  baselineName: string;
  baseline: Summary;
  /** What the figures are in: latencies (the default) or throughputs, where higher is better. */
  unit?: "ms" | "MiB/s" | "req/s" | "creates/s";
}

/** A Markdown table: each figure beside its raw baseline from the same run, and the ratio. */
export function markdownTable(rows: Row[]): string {
  const lines = [
    "| measurement | p50 | p95 | p99 | baseline | baseline p50 | baseline p99 | p50 ratio |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const row of rows) {
    const figure = (value: number) => `${value.toFixed(1)} ${row.unit ?? "ms"}`;
    lines.push(
      `| ${row.name} | ${figure(row.subject.p50)} | ${figure(row.subject.p95)} | ${figure(row.subject.p99)} | ${row.baselineName} | ${figure(row.baseline.p50)} | ${figure(row.baseline.p99)} | ${(row.subject.p50 / row.baseline.p50).toFixed(2)}× |`,
    );
  }
  return lines.join("\n");
}

export function writeResults(name: string, rows: Row[], extra: Record<string, unknown> = {}): void {
  const dir = join(import.meta.dirname, "results");
  mkdirSync(dir, { recursive: true });
  const when = new Date().toISOString();
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ when, rows, ...extra }, null, 2)}\n`);
  writeFileSync(join(dir, `${name}.md`), `# ${name} (${when})\n\n${markdownTable(rows)}\n`);
}

/**
 * A real `paddock serve` process (the built CLI) on a free loopback port with its own data
 * directory and instance name, answering /health; `stop()` ends it and removes its data.
 */
export async function servePaddock(name: string): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), `paddock-bench-${name}-`));
  const cli = join(import.meta.dirname, "..", "packages", "cli", "bin", "paddock.js");
  const server: ChildProcess = spawn(process.execPath, [cli, "serve", "--generate-key"], {
    env: {
      ...process.env,
      PADDOCK_SERVER_HOST: "127.0.0.1",
      PADDOCK_SERVER_PORT: String(port),
      PADDOCK_SERVER_DATA_DIR: dataDir,
      PADDOCK_SERVER_INSTANCE: `bench-${name}-${process.pid}`,
      PADDOCK_SERVER_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const stop = async () => {
    if (server.exitCode === null) {
      server.kill("SIGTERM");
      await new Promise((resolve) => server.once("exit", resolve));
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const answers = () =>
    fetch(`${baseUrl}/health`).then(
      (r) => r.ok,
      () => false,
    );
  for (let tries = 0; !(await answers()); tries++) {
    if (tries > 300 || server.exitCode !== null) {
      await stop();
      throw new Error("paddock serve did not start");
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { baseUrl, stop };
}
