/**
 * Create-to-Running latency of Paddock sandboxes (execd answering) against raw `docker run -d`
 * of the same image and command, under gVisor and runc, in the same run.
 *   node --conditions=@paddock/source --import tsx bench/create/run.ts   (BENCH_N=50 by default)
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, newId, newSecret } from "@paddock/common";
import { openRuntimeStack } from "../../packages/runtime/src/stack.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 50);
const image = "paddock/base:bookworm";
const rows: Row[] = [];

for (const secure of ["gvisor", "runc"] as const) {
  const engineRuntime = secure === "gvisor" ? "runsc" : "runc";
  const baseline: number[] = [];
  const paddock: number[] = [];
  const config = loadConfig({
    overrides: {
      server: {
        data_dir: mkdtempSync(join(tmpdir(), "paddock-bench-")),
        secret_key: newSecret(),
        instance: newId("bench"),
      },
      secure_runtime: { type: secure === "gvisor" ? "gvisor" : "" },
    },
  });
  const stack = await openRuntimeStack(config, createLogger({ level: "error" }));
  // Interleave the two so drift on the machine affects both alike.
  for (let i = 0; i < n; i++) {
    const name = `paddock-bench-raw-${i}`;
    const [raw] = await timed(() =>
      run("docker", [
        "run",
        "-d",
        "--name",
        name,
        "--runtime",
        engineRuntime,
        "--label",
        "paddock.test=bench",
        image,
        "sleep",
        "infinity",
      ]),
    );
    baseline.push(raw);
    await run("docker", ["rm", "-f", name]);
    const [created, sandbox] = await timed(() =>
      stack.sandboxes.create({ image: { uri: image }, entrypoint: ["sleep", "infinity"] }),
    );
    paddock.push(created);
    await stack.sandboxes.delete(sandbox.id);
  }
  await stack.close();
  rows.push({
    name: `create → Running (${secure})`,
    subject: summarize(paddock),
    baselineName: `docker run -d (${engineRuntime})`,
    baseline: summarize(baseline),
  });
}

console.log(markdownTable(rows));
writeResults("create", rows, { n });
