/**
 * E2B's stock SDK against a real `paddock serve` process, in one run, beside Paddock's own
 * TypeScript SDK and raw Docker (gVisor):
 * - a new sandbox to its first command's output: `Sandbox.create` then `commands.run("echo hi")`,
 *   against `docker run --rm --runtime=runsc <the template's image> echo hi`;
 * - `commands.run("echo hi")` in a running sandbox, against `docker exec` in the same container.
 *   node --conditions=@paddock/source --import tsx bench/e2b/run.ts   (BENCH_N=200, BENCH_CREATES=15)
 */
import { Sandbox as E2bSandbox } from "e2b";
import { Paddock, Sandbox } from "../../packages/sdk/src/index.js";
import { markdownTable, type Row, run, servePaddock, summarize, timed, writeResults } from "../lib.js";

const n = Number(process.env.BENCH_N ?? 200);
const creates = Number(process.env.BENCH_CREATES ?? 15);
const image = "paddock/template-python:latest";

const { baseUrl, stop } = await servePaddock("e2b");

try {
  await Paddock.signup("bench@example.com", "benchmark password", { baseUrl });
  const { client } = await Paddock.login("bench@example.com", "benchmark password", { baseUrl });
  const apiKey = (await client.keys.create({ name: "bench", format: "e2b" })).secret;
  // What an E2B user sets; nothing else changes in their code.
  Object.assign(process.env, {
    E2B_API_URL: `${baseUrl}/e2b`,
    E2B_SANDBOX_URL: `${baseUrl}/e2b`,
    E2B_API_KEY: apiKey,
  });
  const rows: Row[] = [];

  // A new sandbox to its first output, interleaved so drift touches each alike.
  const e2bFirst: number[] = [];
  const paddockFirst: number[] = [];
  const dockerFirst: number[] = [];
  for (let i = 0; i < creates; i++) {
    const [e2b, e2bBox] = await timed(async () => {
      const box = await E2bSandbox.create("base");
      if ((await box.commands.run("echo hi")).stdout !== "hi\n")
        throw new Error("E2B SDK: unexpected output");
      return box;
    });
    await e2bBox.kill();
    const [own, ownBox] = await timed(async () => {
      const box = await Sandbox.create({ template: "python", apiKey, baseUrl });
      if ((await box.commands.run("echo hi")).stdout !== "hi\n")
        throw new Error("Paddock SDK: unexpected output");
      return box;
    });
    await ownBox.kill();
    const [docker] = await timed(() =>
      run("docker", ["run", "--rm", "--runtime=runsc", image, "echo", "hi"]),
    );
    e2bFirst.push(e2b);
    paddockFirst.push(own);
    dockerFirst.push(docker);
  }
  const dockerRun = summarize(dockerFirst);
  rows.push({
    name: "new sandbox → first output: E2B SDK",
    subject: summarize(e2bFirst),
    baselineName: "docker run --rm (runsc)",
    baseline: dockerRun,
  });
  rows.push({
    name: "new sandbox → first output: Paddock SDK",
    subject: summarize(paddockFirst),
    baselineName: "docker run --rm (runsc)",
    baseline: dockerRun,
  });

  // echo hi in one running sandbox, through each client, and docker exec in its container.
  const e2bBox = await E2bSandbox.create("base", { timeoutMs: 600_000 });
  const ownBox = await Sandbox.connect(e2bBox.sandboxId, { apiKey, baseUrl });
  const e2bRounds: number[] = [];
  const ownRounds: number[] = [];
  const execRounds: number[] = [];
  for (let i = 0; i < n; i++) {
    e2bRounds.push(
      (
        await timed(async () => {
          if ((await e2bBox.commands.run("echo hi")).stdout !== "hi\n")
            throw new Error("E2B SDK: unexpected output");
        })
      )[0],
    );
    ownRounds.push(
      (
        await timed(async () => {
          if ((await ownBox.commands.run("echo hi")).stdout !== "hi\n")
            throw new Error("Paddock SDK: unexpected output");
        })
      )[0],
    );
    execRounds.push((await timed(() => run("docker", ["exec", e2bBox.sandboxId, "echo", "hi"])))[0]);
  }
  await e2bBox.kill();
  const dockerExec = summarize(execRounds);
  rows.push({
    name: "echo hi: E2B SDK",
    subject: summarize(e2bRounds),
    baselineName: "docker exec",
    baseline: dockerExec,
  });
  rows.push({
    name: "echo hi: Paddock SDK",
    subject: summarize(ownRounds),
    baselineName: "docker exec",
    baseline: dockerExec,
  });
  writeResults("e2b", rows, { creates, n });
  console.log(markdownTable(rows));
} finally {
  await stop();
}
