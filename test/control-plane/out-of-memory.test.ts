import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callApi } from "../support/user.js";

/**
 * One cause, one code: a sandbox killed for memory answers `sandbox_oom_killed` on the command
 * that was running and on every later call, run after run, under gVisor and runc (decision 0001).
 * Every sandbox's answers are collected first and compared at the end, so a failure shows them all.
 */
const runs = 5;
const bombs = [`python3 -c "x=bytearray(4*1024**3)"`, "head -c 3G /dev/zero | tail >/dev/null"];
/** Under runc the kernel kills the largest process; offered up first, tini (PID 1) takes the sandbox with it. */
const wholeSandbox = "echo 1000 > /proc/1/oom_score_adj; ";

function smallTemplates(): string {
  const dir = mkdtempSync(join(tmpdir(), "paddock-oom-"));
  mkdirSync(join(dir, "small"));
  writeFileSync(
    join(dir, "small", "template.toml"),
    'id = "small"\nname = "Small"\ndescription = "256 MiB"\nimage = "paddock/template-python:latest"\n[resources]\nmemory = "256Mi"\n',
  );
  return dir;
}

for (const [runtime, secureRuntime, prefix] of [
  ["gVisor", "gvisor", ""],
  ["runc", "", wholeSandbox],
] as const) {
  describe(`a sandbox killed for memory under ${runtime}`, () => {
    let t: TestServer;
    let token: string;
    beforeAll(async () => {
      t = await startTestServer({
        config: { templates: { dir: smallTemplates() }, secure_runtime: { type: secureRuntime } },
      });
      token = await t.account("oom@example.com");
    });
    afterAll(async () => {
      await t?.dispose();
    });

    test(`answers sandbox_oom_killed on the command, on the record and on the next call, ${runs} sandboxes at once`, async () => {
      // At once: a loaded engine is slow to see a sandbox end and to order its events, which is
      // when the answers used to differ.
      const seen = await Promise.all(
        Array.from({ length: runs }, async (_, run) => {
          const command = `${prefix}${bombs[run % bombs.length]}`;
          const created = await callApi(t, token, "POST", "/sandboxes", { template: "small" });
          const id = created.body.id as string;
          const bomb = await callApi(t, token, "POST", `/sandboxes/${id}/run`, { command });
          const record = await callApi(t, token, "GET", `/sandboxes/${id}`);
          const next = await callApi(t, token, "POST", `/sandboxes/${id}/run`, { command: "true" });
          return {
            command,
            bomb: [bomb.status, bomb.body.code],
            record: [record.body.state, record.body.reason],
            next: [next.status, next.body.code],
          };
        }),
      );
      expect(seen).toEqual(
        seen.map(({ command }) => ({
          command,
          bomb: [409, "sandbox_oom_killed"],
          record: ["Failed", "oom_killed"],
          next: [409, "sandbox_oom_killed"],
        })),
      );
    });
  });
}

describe("a command killed for memory in a runc sandbox that lives on", () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer({
      config: { templates: { dir: smallTemplates() }, secure_runtime: { type: "" } },
    });
    token = await t.account("oom-process@example.com");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("answers its exit code 137 with oomKilled; a SIGKILL for another reason has no such flag", async () => {
    const created = await callApi(t, token, "POST", "/sandboxes", { template: "small" });
    const id = created.body.id as string;
    const answers = [];
    for (const command of [...bombs, "kill -9 $$"]) {
      const run = await callApi(t, token, "POST", `/sandboxes/${id}/run`, { command });
      answers.push([command, run.status, run.body.exitCode, run.body.oomKilled ?? false]);
    }
    const record = await callApi(t, token, "GET", `/sandboxes/${id}`);
    expect({ answers, state: record.body.state }).toEqual({
      answers: [
        [bombs[0], 200, 137, true],
        [bombs[1], 200, 137, true],
        ["kill -9 $$", 200, 137, false],
      ],
      state: "Running",
    });
  });
});
