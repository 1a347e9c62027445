import { EXECD_ENV_PATH } from "@paddock/common";
import { describe, expect, test } from "vitest";
import { countProcesses, type ExecdClient, sandboxPerSuite } from "./client.js";

/**
 * Commands after the first run in a shell started ahead of time. These tests compare each such
 * command with the same command forced onto a freshly spawned shell (`uid: 0` always spawns one):
 * what the command sees must not tell them apart.
 */
describe.each(["gvisor", "runc"] as const)("execd's warm shell under %s", (secure) => {
  let execd: ExecdClient;
  // Only the warm shell's bootstrap leaves this variable behind (unexported).
  const probe = "declare -p __paddock_command >/dev/null 2>&1 && echo warm || echo cold";
  const cold = { uid: 0 };

  /** Runs `command` once a warm shell is waiting, and checks that it was the one that ran it. */
  async function warmRun(command: string, options: Record<string, unknown> = {}) {
    await expect.poll(async () => (await execd.run(probe)).stdout).toBe("warm\n");
    const result = await execd.run(`{ ${probe}; } >&2; ${command}`, options);
    expect(result.stderr.split("\n")[0], "ran in the warm shell").toBe("warm");
    return { ...result, stderr: result.stderr.split("\n").slice(1).join("\n") };
  }

  sandboxPerSuite(
    secure,
    { image: { uri: "paddock/base:bookworm" }, env: { SANDBOX_GREETING: "hi from env" } },
    (made) => {
      execd = made;
    },
  );

  test("a command needing a uid gets a shell of its own", async () => {
    expect((await execd.run(probe, cold)).stdout).toBe("cold\n");
  });

  test("environment, cwd and $PWD are those a fresh shell would have", async () => {
    const envs = {
      EXTRA: "per-call",
      QUOTED: `it's "quoted" $HOME \\n`,
      MULTI: "line 1\nline 2",
      UNI: "ünï ✓",
    };
    const listing = "env -0 | tr '\\0' '\\n' | grep -v -e '^_=' -e '^OLDPWD=' | sort; pwd; echo $PWD";
    const expected = await execd.run(listing, { ...cold, envs, cwd: "/var" });
    const warm = await warmRun(listing, { envs, cwd: "/var" });
    expect(warm.stdout).toBe(expected.stdout);
    expect(warm.stdout).toContain('QUOTED=it\'s "quoted" $HOME \\n\n');
    expect(warm.stdout).toContain("MULTI=line 1\n");
    expect(warm.stdout).toContain("SANDBOX_GREETING=hi from env\n");
    expect(warm.stdout).toMatch(/\/var\n\/var\n$/);
    expect(warm.stdout).not.toContain("PADDOCK_EXECD_TOKEN");
    // No cwd: the same default directory as a fresh shell.
    expect((await warmRun("pwd")).stdout).toBe((await execd.run("pwd", cold)).stdout);
  });

  test("stdin is empty, the control pipe is closed, stdout and stderr stay apart", async () => {
    const command =
      "cat; { : <&3; } 2>/dev/null && echo fd 3 open || echo fd 3 closed; echo out; echo err >&2";
    const expected = await execd.run(command, cold);
    const warm = await warmRun(command);
    expect(warm.stdout).toBe(expected.stdout);
    expect(warm.stdout).toBe("fd 3 closed\nout\n");
    expect(warm.stderr).toBe("err\n");
  });

  test("exit codes, syntax errors, signals and a cwd that is a file", async () => {
    expect((await warmRun("exit 7")).last).toMatchObject({ type: "error", exit_code: 7 });
    await expect.poll(async () => (await execd.run(probe)).stdout).toBe("warm\n");
    const syntax = await execd.run("if then");
    expect(syntax.last).toMatchObject({ type: "error", exit_code: 2 });
    expect(syntax.stderr).toContain("syntax error");
    expect((await warmRun("echo before; kill -9 $$")).last).toMatchObject({
      type: "error",
      exit_code: 137,
    });
    // A cwd that is a file is refused before anything runs, with a warm shell waiting or not.
    await expect.poll(async () => (await execd.run(probe)).stdout).toBe("warm\n");
    for (const options of [{}, cold]) {
      const response = await execd.fetch("/command", {
        method: "POST",
        body: JSON.stringify({ command: "echo unreachable", cwd: "/etc/hostname", ...options }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: "not_a_directory" });
    }
    expect((await warmRun("true")).last).toMatchObject({ type: "execution_complete", exit_code: 0 });
  });

  test("each command is the leader of its own process group and session", async () => {
    const ids = "ps -o pid=,pgid=,sid= -p $$ 2>/dev/null || awk '{print $1, $5, $6}' /proc/$$/stat";
    const [pid, pgid, sid] = (await warmRun(ids)).stdout.trim().split(/\s+/);
    expect(pgid).toBe(pid);
    expect(sid).toBe(pid);
  });

  test("names bash owns still reach the command exactly as given", async () => {
    const command = 'printf \'%s|\' "$IFS" "$SHLVL"; echo';
    const envs = { IFS: ":", SHLVL: "41" };
    const expected = await execd.run(command, { ...cold, envs });
    await expect.poll(async () => (await execd.run(probe)).stdout).toBe("warm\n");
    expect((await execd.run(command, { envs })).stdout).toBe(expected.stdout);
  });

  test("an environment set later through the env extension reaches the next command", async () => {
    await expect.poll(async () => (await execd.run(probe)).stdout).toBe("warm\n");
    const set = await execd.fetch(EXECD_ENV_PATH, { method: "POST", body: '{"CLAIMED":"after claim"}' });
    expect(set.status).toBe(200);
    expect((await execd.run("echo $CLAIMED")).stdout).toBe("after claim\n");
    expect((await warmRun("echo $CLAIMED")).stdout).toBe("after claim\n");
  });

  test("a background command in a warm shell is reattachable and can be interrupted", async () => {
    await expect.poll(async () => (await execd.run(probe)).stdout).toBe("warm\n");
    const events = await execd.events("/command", {
      command: `${probe}; sleep 4545 & sleep 4545`,
      background: true,
    });
    const id = String(events[0]?.text);
    await expect.poll(async () => (await execd.fetch(`/command/${id}/logs`)).text()).toBe("warm\n");
    expect((await execd.fetch(`/command?id=${id}`, { method: "DELETE" })).status).toBe(200);
    await expect.poll(async () => (await execd.json(`/command/status/${id}`)).running).toBe(false);
    expect(await execd.json(`/command/status/${id}`)).toMatchObject({ exit_code: 143 });
    expect((await execd.run(countProcesses("sleep 4545"))).stdout.trim()).toBe("0");
  });
});
