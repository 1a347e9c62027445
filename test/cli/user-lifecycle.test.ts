import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine } from "./user-cli.js";

// Sleep and wake from the shell (decisions 0190, 0193): the lifecycle flags on create, the plan's
// default said where it applied, a pause to disk, a command that wakes the sandbox, and usage.

interface SandboxJson {
  id: string;
  state: string;
  lifecycle: Record<string, unknown>;
  pausedTo: string | null;
  memoryPreserved: boolean | null;
}

describe("paddock: a sandbox's lifecycle", () => {
  let t: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("sleeper");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("create shows the lifecycle and says the plan's default applied; flags choose their own", async () => {
    const plain = await user.run(["sandbox", "create"]);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^on timeout: +kill$/m);
    expect(plain.stdout).toMatch(/^sleep: +pauses after 15m idle; deleted after 30d paused$/m);
    expect(plain.stdout).toMatch(/^idles at: +\d{4}-\d\d-\d\d /m);
    expect(plain.stdout).toContain(
      "The plan's default applied: pauses after 15m idle; deleted after 30d paused",
    );

    const chosen = await user.json<SandboxJson>([
      "sandbox",
      "create",
      "--timeout",
      "600",
      "--on-timeout",
      "pause",
      "--idle-timeout",
      "never",
      "--max-paused",
      "1h30m",
      "--no-auto-resume",
      "--no-processes-keep-awake",
    ]);
    expect(chosen.lifecycle).toEqual({
      onTimeout: "pause",
      idleTimeout: null,
      processesKeepAwake: false,
      autoResume: false,
      keepMemory: true,
      maxPaused: 5400,
    });
    const shown = await user.run(["sandbox", "get", chosen.id]);
    expect(shown.stdout).toMatch(/^sleep: +never pauses when idle; deleted after 1h30m paused$/m);
    expect(shown.stdout).toMatch(
      /^on use: +stays paused until resumed; running processes do not keep it awake$/m,
    );
    expect(shown.stdout).not.toContain("plan's default");
    for (const id of [plain.stdout.match(/^id: +(\S+)$/m)?.[1] ?? "", chosen.id])
      expect((await user.run(["sandbox", "kill", id])).status).toBe(0);
  });

  test("bad lifecycle flags are usage errors", async () => {
    for (const args of [
      ["--on-timeout", "sleep"],
      ["--idle-timeout", "15x"],
      ["--idle-timeout", "0"],
      ["--max-paused", "soon"],
    ]) {
      const result = await user.run(["sandbox", "create", ...args]);
      expect([args, result.status, result.stdout]).toEqual([args, 2, ""]);
      expect(result.stderr).toMatch(errorLine("usage"));
    }
  });

  test("pause --to-disk, then exec wakes it; list, get and usage show where it slept and the resume", async () => {
    const sandbox = await user.json<SandboxJson>(["sandbox", "create", "--idle-timeout", "never"]);
    expect((await user.run(["exec", sandbox.id, "--", "sh", "-c", "echo kept > /root/note"])).status).toBe(0);
    const paused = await user.run(["sandbox", "pause", sandbox.id, "--to-disk"]);
    expect(paused.status, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^state: +Paused \(disk/m);
    const listed = await user.run(["sandbox", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`^${sandbox.id} +Paused \\(disk`, "m"));
    const json = await user.json<SandboxJson>(["sandbox", "get", sandbox.id]);
    expect(json).toMatchObject({ state: "Paused", pausedTo: "disk" });
    expect(typeof json.memoryPreserved).toBe("boolean");

    const read = await user.run(["exec", sandbox.id, "--", "cat", "/root/note"]);
    expect(read).toMatchObject({ status: 0, stdout: "kept\n" });
    expect(await user.json<SandboxJson>(["sandbox", "get", sandbox.id])).toMatchObject({
      state: "Running",
      pausedTo: null,
    });

    const usage = await user.run(["usage"]);
    expect(usage.stdout).toMatch(/^resumes: +1$/m);
    expect(usage.stdout).toMatch(
      /^sleep: +pauses after 15m idle; deleted after 30d paused \(the plan's default\)$/m,
    );
    expect((await user.run(["sandbox", "kill", sandbox.id])).status).toBe(0);
  });
});
