/**
 * `sandbox.commands` of E2B's stock `e2b` SDK, from the npm registry and unmodified, against a live
 * Paddock server (real Docker, gVisor): execd's envd `process.Process` service through the E2B
 * gateway, with only E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY set.
 */
import {
  AuthenticationError,
  CommandExitError,
  type CommandHandle,
  InvalidArgumentError,
  NotFoundError,
  Sandbox,
  SandboxError,
  TimeoutError,
} from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

/** Resolves once `condition` holds, polling; fails after 20 s with what `describe` says. */
async function until(condition: () => boolean | Promise<boolean>, describe: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the stock e2b SDK: sandbox.commands", () => {
  let server: E2bServer;
  let sandbox: Sandbox;
  const pids = async () => (await sandbox.commands.list()).map((process) => process.pid);

  beforeAll(async () => {
    server = await startE2bServer();
    Object.assign(process.env, server.env);
    sandbox = await Sandbox.create("base", { timeoutMs: 600_000, envs: { SANDBOX_WIDE: "from create" } });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("the sandbox is a gVisor one", async () => {
    const { stdout } = await sandbox.commands.run("dmesg | head -n 1");
    expect(stdout).toContain("gVisor");
  });

  test("run: stdout and stderr, as text and through callbacks, exit code 0, as user in /home/user", async () => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const result = await sandbox.commands.run("echo out; echo err >&2; pwd; id -un; echo $HOME", {
      onStdout: (data) => {
        stdout.push(data);
      },
      onStderr: (data) => {
        stderr.push(data);
      },
    });
    expect(result).toMatchObject({
      exitCode: 0,
      stdout: "out\n/home/user\nuser\n/home/user\n",
      stderr: "err\n",
    });
    expect(result.error).toBeUndefined();
    expect(stdout.join("")).toBe(result.stdout);
    expect(stderr.join("")).toBe("err\n");
  });

  test("every run is a fresh login shell, whether started ahead of time (warm) or not", async () => {
    // The first run starts its shell cold and the ones after it take the shell started meanwhile;
    // each must look exactly like `bash -l -c`: a login shell, in its own process, with the
    // sandbox's variables, in the directory asked for, with no state left by the one before.
    const seen = new Set<string>();
    for (let run = 0; run < 4; run++) {
      const { stdout } = await sandbox.commands.run(
        'shopt -q login_shell && echo login; echo "$$ $SANDBOX_WIDE $(pwd) ${LEFT_BEHIND:-clean}"; LEFT_BEHIND=yes',
        run % 2 ? { cwd: "/tmp" } : {},
      );
      const [login, line = ""] = stdout.trim().split("\n");
      expect(login).toBe("login");
      const [pid, ...rest] = line.split(" ");
      expect(rest.join(" ")).toBe(`from create ${run % 2 ? "/tmp" : "/home/user"} clean`);
      seen.add(pid as string);
    }
    expect(seen.size).toBe(4);
  });

  test("a non-zero exit is a CommandExitError with the code, the output and envd's wording", async () => {
    const failed = await sandbox.commands
      .run("echo partial; echo broken >&2; exit 7")
      .catch((error) => error);
    expect(failed).toBeInstanceOf(CommandExitError);
    expect(failed).toMatchObject({
      exitCode: 7,
      error: "exit status 7",
      stdout: "partial\n",
      stderr: "broken\n",
    });
  });

  test("envs (per command over the sandbox's) and cwd", async () => {
    const result = await sandbox.commands.run('echo "$ONE|$SANDBOX_WIDE"; pwd', {
      envs: { ONE: "1", SANDBOX_WIDE: "overridden" },
      cwd: "/tmp",
    });
    expect(result.stdout).toBe("1|overridden\n/tmp\n");
    expect((await sandbox.commands.run('echo "$SANDBOX_WIDE"')).stdout).toBe("from create\n");
    await expect(sandbox.commands.run("pwd", { cwd: "/no/such/dir" })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  test("user: nobody runs as nobody, with its HOME; an unknown user is refused as envd does", async () => {
    const result = await sandbox.commands.run("id -un; id -u; echo $HOME $USER; pwd", { user: "nobody" });
    expect(result.stdout).toBe("nobody\n65534\n/nonexistent nobody\n/\n");
    expect((await sandbox.commands.run("id -un", { user: "root" })).stdout).toBe("root\n");
    await expect(sandbox.commands.run("id -un", { user: "no-such-user" })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  test("a command that leaves a process behind (holding its output) ends when its shell does", async () => {
    const started = Date.now();
    const result = await sandbox.commands.run("sleep 303 & echo left-behind");
    expect(result).toMatchObject({ exitCode: 0, stdout: "left-behind\n" });
    expect(Date.now() - started).toBeLessThan(5000);
    const running = await sandbox.commands.run(
      "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done 2>/dev/null | grep -c '^sleep 303' || true",
    );
    expect(running.stdout).toBe("1\n");
  });

  test("a large output arrives whole and in order", async () => {
    let streamed = 0;
    const result = await sandbox.commands.run("seq 1 300000", {
      onStdout: (data) => {
        streamed += data.length;
      },
    });
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(300_000);
    expect(lines[0]).toBe("1");
    expect(lines[299_999]).toBe("300000");
    expect(streamed).toBe(result.stdout.length);
  });

  test("background: start returns at once with a pid; wait() gives the result; list() shows it meanwhile", async () => {
    const seen: string[] = [];
    const handle = await sandbox.commands.run("echo started; sleep 1; echo done", {
      background: true,
      envs: { LISTED: "yes" },
      cwd: "/tmp",
      onStdout: (data) => {
        seen.push(data);
      },
    });
    expect(handle.pid).toBeGreaterThan(0);
    const listed = (await sandbox.commands.list()).find((process) => process.pid === handle.pid);
    expect(listed).toMatchObject({
      pid: handle.pid,
      cmd: "/bin/bash",
      args: ["-l", "-c", "echo started; sleep 1; echo done"],
      envs: { LISTED: "yes" },
      cwd: "/tmp",
    });
    const result = await handle.wait();
    expect(result).toMatchObject({ exitCode: 0, stdout: "started\ndone\n" });
    expect(seen.join("")).toBe("started\ndone\n");
    expect(await pids()).not.toContain(handle.pid);
  });

  test("kill: the command dies (SIGKILL), wait() says so, it is gone from list(), a second kill is false", async () => {
    const handle = await sandbox.commands.run("sleep 301", { background: true });
    expect(await pids()).toContain(handle.pid);
    expect(await handle.kill()).toBe(true);
    expect(await pids()).not.toContain(handle.pid);
    const ended = await handle.wait().catch((error) => error);
    expect(ended).toBeInstanceOf(CommandExitError);
    expect(ended).toMatchObject({ exitCode: -1, error: "signal: killed" });
    expect(await sandbox.commands.kill(handle.pid)).toBe(false);
    // The process group goes with it: nothing of the command is left.
    const survivors = await sandbox.commands.run(
      "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done 2>/dev/null | grep -c '^sleep 301' || true",
    );
    expect(survivors.stdout).toBe("0\n");
  });

  test("a background command outlives its client; connect(pid) sees its output from then on", async () => {
    const first: string[] = [];
    const handle = await sandbox.commands.run(
      "for i in $(seq 1 40); do echo tick-$i; sleep 0.1; done; echo finished",
      {
        background: true,
        onStdout: (data) => {
          first.push(data);
        },
      },
    );
    await until(
      () => first.join("").includes("tick-2\n"),
      () => first.join(""),
    );
    await handle.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await pids()).toContain(handle.pid);

    const later: string[] = [];
    const connected: CommandHandle = await sandbox.commands.connect(handle.pid, {
      onStdout: (data) => {
        later.push(data);
      },
    });
    expect(connected.pid).toBe(handle.pid);
    const result = await connected.wait();
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("finished\n");
    // Output printed while nobody listened is not replayed.
    expect(result.stdout).not.toContain("tick-1\n");
    expect(later.join("")).toBe(result.stdout);
  });

  test("stdin: sendStdin feeds a command started with stdin: true, closeStdin ends its input", async () => {
    const handle = await sandbox.commands.run("cat; echo eof", { background: true, stdin: true });
    await handle.sendStdin("hello ");
    await sandbox.commands.sendStdin(handle.pid, new TextEncoder().encode("world\n"));
    await until(
      () => handle.stdout === "hello world\n",
      () => handle.stdout,
    );
    await handle.closeStdin();
    const result = await handle.wait();
    expect(result.stdout).toBe("hello world\neof\n");

    // Without stdin: true, stdin is /dev/null and input is refused.
    expect((await sandbox.commands.run("cat; echo nothing")).stdout).toBe("nothing\n");
    const quiet = await sandbox.commands.run("sleep 30", { background: true });
    const refused = await quiet.sendStdin("x").catch((error) => error);
    expect(refused).toBeInstanceOf(SandboxError);
    expect(refused.message).toContain("without stdin");
    await quiet.kill();
  });

  test("timeoutMs: the call fails with TimeoutError and the command is killed", async () => {
    const marker = `/tmp/timeout-marker-${Date.now()}`;
    const started = Date.now();
    const failed = await sandbox.commands
      .run(`sleep 3; touch ${marker}`, { timeoutMs: 1000 })
      .catch((error) => error);
    expect(failed).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(2900);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await sandbox.commands.run(`test -e ${marker} && echo exists || echo absent`)).stdout).toBe(
      "absent\n",
    );
    expect(await sandbox.commands.list()).toEqual([]);
  });

  test("a background command started with timeoutMs: 0 has no deadline", async () => {
    const handle = await sandbox.commands.run("sleep 2; echo survived", { background: true, timeoutMs: 0 });
    expect((await handle.wait()).stdout).toBe("survived\n");
  });

  test("unknown pids: connect and sendStdin raise NotFoundError, kill answers false", async () => {
    const unknown = 4_000_000;
    await expect(sandbox.commands.connect(unknown)).rejects.toBeInstanceOf(NotFoundError);
    await expect(sandbox.commands.sendStdin(unknown, "x")).rejects.toBeInstanceOf(NotFoundError);
    await expect(sandbox.commands.closeStdin(unknown)).rejects.toBeInstanceOf(NotFoundError);
    expect(await sandbox.commands.kill(unknown)).toBe(false);
  });
});
