/**
 * Egress enforcement against no enforcement, same machine, same run: an allowed HTTP request by
 * name (DNS through the proxy, address learned into nft) and by address, from a sandbox with the
 * sidecar and from an identical one without; and how long a PATCH takes to be in force (the API
 * answers once the nft transaction is committed, then one new connection confirms it). Under
 * both runtimes a sandbox may have: runc, and gVisor with host-kernel sockets (runsc).
 *   node --conditions=@paddock/source --import tsx bench/egress/run.ts   (BENCH_N=100 by default)
 */
import {
  api,
  buildImages,
  createWorld,
  docker,
  removeWorld,
  shell,
  startSidecar,
} from "../../packages/egress/test/world.js";
import { markdownTable, type Row, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 100);

/** Per-request totals as curl measures them inside the container (no docker exec in the figure). */
async function requestTimes(container: string, url: string): Promise<number[]> {
  const script = `for i in $(seq ${n}); do curl -sS -o /dev/null -w '%{time_total}\\n' ${url} || echo fail; done`;
  const { output } = await shell(container, script);
  const lines = output.trim().split("\n");
  if (lines.some((line) => line === "fail" || Number.isNaN(Number(line)))) {
    throw new Error(`requests from ${container} to ${url} failed:\n${output.slice(0, 500)}`);
  }
  return lines.map((line) => Number(line) * 1000);
}

await buildImages();
const rows: Row[] = [];
for (const runtime of ["runc", "runsc"] as const) rows.push(...(await measure(runtime)));
writeResults("egress", rows, { n });
console.log(markdownTable(rows));

async function measure(runtime: "runc" | "runsc"): Promise<Row[]> {
  const world = await createWorld(runtime);
  const baseline = `${world.prefix}-plain`;
  try {
    await startSidecar(world, {
      defaultAction: "deny",
      egress: [{ action: "allow", target: "allowed.test" }],
    });
    // The same sandbox without a sidecar: same image, runtime, network, resolver and capabilities.
    await docker(
      "run",
      "-d",
      "--name",
      baseline,
      "--label",
      "paddock.test=egress",
      "--runtime",
      runtime,
      "--network",
      world.prefix,
      "--dns",
      world.dns,
      "--cap-drop",
      "ALL",
      "paddock/egress-test-world:0.1.0",
      "sleep",
      "infinity",
    );
    await requestTimes(world.sandbox, "http://allowed.test/"); // warm both paths once
    await requestTimes(baseline, "http://allowed.test/");
    const rows: Row[] = [
      {
        name: `HTTP GET by name, enforced (${runtime})`,
        subject: summarize(await requestTimes(world.sandbox, "http://allowed.test/")),
        baselineName: "no sidecar",
        baseline: summarize(await requestTimes(baseline, "http://allowed.test/")),
      },
      {
        name: `HTTP GET by address, enforced (${runtime})`,
        subject: summarize(await requestTimes(world.sandbox, `http://${world.http1}/`)),
        baselineName: "no sidecar",
        baseline: summarize(await requestTimes(baseline, `http://${world.http1}/`)),
      },
    ];

    const patches: number[] = [];
    const reads: number[] = [];
    for (let index = 0; index < Math.min(n, 30); index++) {
      const [patchMs, patched] = await timed(() =>
        api(world, "PATCH", [{ action: "allow", target: "denied.test" }]),
      );
      if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}`);
      patches.push(patchMs);
      // In force on return: the very next connection gets through.
      const probe = await shell(world.sandbox, "curl -sS -m 2 http://denied.test/");
      if (!probe.output.includes("hello-two"))
        throw new Error(`PATCH not in force on return: ${probe.output}`);
      await api(world, "DELETE", ["denied.test"]);
      reads.push((await timed(() => api(world, "GET")))[0]);
    }
    rows.push({
      name: `PATCH /policy until in force (${runtime})`,
      subject: summarize(patches),
      baselineName: "GET /policy",
      baseline: summarize(reads),
    });
    return rows;
  } finally {
    await docker("rm", "-f", baseline).catch(() => undefined);
    await removeWorld(world);
  }
}
