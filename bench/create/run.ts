/**
 * Create-to-Running latency of Paddock sandboxes (execd answering) against raw `docker run -d`
 * of the same image and command, under gVisor and runc, in the same run.
 *   node --conditions=@paddock/source --import tsx bench/create/run.ts   (BENCH_N=50 by default)
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, loadConfig, newId, newSecret } from "@paddock/common";
import { openRuntimeStack } from "../../packages/runtime/src/stack.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 50);
const image = "paddock/base:bookworm";
const rows: Row[] = [];
/** Median time of each phase of the runtime's create (its debug log), per runtime. */
const phases: Record<string, Record<string, number>> = {};

/** A logger that keeps the phase timings the Docker runtime logs for each create. */
function phaseLog(): { logger: ReturnType<typeof createLogger>; samples: Record<string, number>[] } {
  const samples: Record<string, number>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (!line.includes('"phasesMs"')) continue;
        samples.push((JSON.parse(line) as { phasesMs: Record<string, number> }).phasesMs);
      }
      done();
    },
  });
  return { logger: createLogger({ level: "debug", destination }), samples };
}

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
  const log = phaseLog();
  const stack = await openRuntimeStack(config, log.logger);
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
  phases[secure] = Object.fromEntries(
    Object.keys(log.samples[0] ?? {}).map((phase) => [
      phase,
      summarize(log.samples.map((sample) => sample[phase] ?? 0)).p50,
    ]),
  );
  rows.push({
    name: `create → Running (${secure})`,
    subject: summarize(paddock),
    baselineName: `docker run -d (${engineRuntime})`,
    baseline: summarize(baseline),
  });
}

console.log(markdownTable(rows));
console.log("phases of the runtime's create, p50 ms:", JSON.stringify(phases, null, 2));
writeResults("create", rows, { n, phases });
