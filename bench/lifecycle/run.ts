/**
 * Pause → Paused, resume → Running and snapshot → Ready through the runtime, against `docker pause`,
 * `docker unpause` and `docker commit` of a container of the same image, same runtime, same run.
 *   node --conditions=@paddock/source --import tsx bench/lifecycle/run.ts   (BENCH_N=20 by default)
 */
import { openTestStack } from "../../packages/runtime/src/testing/index.js";
import { markdownTable, type Row, run, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 20);
const image = "paddock/base:bookworm";
const rows: Row[] = [];

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 2));
}

for (const secure of ["gvisor", "runc"] as const) {
  const t = await openTestStack({ secure });
  const sandbox = await t.stack.sandboxes.create({
    image: { uri: image },
    entrypoint: ["sleep", "infinity"],
  });
  const raw = `paddock-bench-lifecycle-${secure}`;
  await run("docker", [
    "run",
    "-d",
    "--name",
    raw,
    "--runtime",
    secure === "gvisor" ? "runsc" : "runc",
    "--label",
    "paddock.test=bench",
    image,
    "sleep",
    "infinity",
  ]);
  const state = async () => (await t.stack.sandboxes.get(sandbox.id)).status.state;
  const pause: number[] = [];
  const resume: number[] = [];
  const rawPause: number[] = [];
  const rawResume: number[] = [];
  for (let i = 0; i < n; i++) {
    pause.push(
      (
        await timed(async () => {
          await t.stack.sandboxes.pause(sandbox.id);
          await until(async () => (await state()) === "Paused");
        })
      )[0],
    );
    resume.push(
      (
        await timed(async () => {
          await t.stack.sandboxes.resume(sandbox.id);
          await until(async () => (await state()) === "Running");
        })
      )[0],
    );
    rawPause.push((await timed(() => run("docker", ["pause", raw])))[0]);
    rawResume.push((await timed(() => run("docker", ["unpause", raw])))[0]);
  }
  const snapshot: number[] = [];
  const rawCommit: number[] = [];
  for (let i = 0; i < Math.min(n, 5); i++) {
    const [ms, taken] = await timed(async () => {
      const created = await t.stack.snapshots.create(sandbox.id, {});
      await until(async () => (await t.stack.snapshots.get(created.id)).status.state !== "Creating");
      return created;
    });
    snapshot.push(ms);
    await t.stack.snapshots.delete(taken.id);
    rawCommit.push((await timed(() => run("docker", ["commit", raw, `paddock-bench-commit:${i}`])))[0]);
    await run("docker", ["rmi", `paddock-bench-commit:${i}`]);
  }
  await run("docker", ["rm", "-f", raw]);
  await t.dispose();
  rows.push({
    name: `pause → Paused (${secure})`,
    subject: summarize(pause),
    baselineName: "docker pause",
    baseline: summarize(rawPause),
  });
  rows.push({
    name: `resume → Running (${secure})`,
    subject: summarize(resume),
    baselineName: "docker unpause",
    baseline: summarize(rawResume),
  });
  rows.push({
    name: `snapshot → Ready (${secure})`,
    subject: summarize(snapshot),
    baselineName: "docker commit",
    baseline: summarize(rawCommit),
  });
}

console.log(markdownTable(rows));
writeResults("lifecycle", rows, { n });
