/**
 * Isolated sessions driven by the published OpenSandbox SDK, unmodified, against a real Paddock
 * server and the execd of a real sandbox under the default secure runtime (gVisor), and what
 * must hold alike under gVisor and runc.
 */
import { ConnectionConfig, type OutputMessage, Sandbox } from "@alibaba-group/opensandbox";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const texts = (messages: OutputMessage[]) => messages.map((message) => message.text);

describe("isolated sessions", () => {
  let t: TestServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer();
    const connectionConfig = new ConnectionConfig({
      domain: t.url,
      apiKey: t.apiKey,
      requestTimeoutSeconds: 60,
    });
    sandbox = await Sandbox.create({
      connectionConfig,
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
      timeoutSeconds: 600,
    });
    const setup = await sandbox.commands.run(
      "mkdir -p /workspace /data/in && echo base > /workspace/a.txt && echo data > /data/in/d.txt",
    );
    expect(setup.exitCode).toBe(0);
  });
  afterAll(async () => {
    await sandbox?.kill();
    await t?.dispose();
  });

  test("capabilities say sessions, diff and commit are available", async () => {
    expect(await sandbox.isolation.capabilities()).toMatchObject({
      available: true,
      isolator: "paddock-overlay",
      diff_supported: true,
      commit_supported: true,
      userns_available: true,
    });
  });

  test("runs share one shell, see only the session's processes, and keep writes out of the workspace", async () => {
    const session = await sandbox.isolation.create({ workspace: { path: "/workspace", mode: "overlay" } });
    try {
      const first = await session.run("cd /tmp && export KEPT=yes && echo changed > /workspace/a.txt");
      expect(first.exitCode).toBe(0);
      const second = await session.run("pwd; echo $KEPT; cat /workspace/a.txt");
      expect(texts(second.logs.stdout)).toEqual(["/tmp", "yes", "changed"]);
      // The shell's own /proc: its init, the shell, and the pipeline's ls and grep.
      const processes = await session.run("ls /proc | grep -c '^[0-9]'");
      expect(Number(texts(processes.logs.stdout)[0])).toBeLessThanOrEqual(4);
      expect(texts((await sandbox.commands.run("cat /workspace/a.txt")).logs.stdout)).toEqual(["base"]);
      expect(await session.get()).toMatchObject({ status: "active", workspace: { path: "/workspace" } });
    } finally {
      await session.delete();
    }
  });

  test("binds bring sandbox paths into a session, read-only when asked", async () => {
    const outcome = await sandbox.isolation.withSession(
      {
        workspace: { path: "/workspace", mode: "overlay" },
        binds: [{ source: "/data/in", dest: "/mnt/data", readonly: true }],
      },
      async (session) => {
        const read = await session.run("cat /mnt/data/d.txt; echo x > /mnt/data/new.txt || echo refused");
        return { stdout: texts(read.logs.stdout), info: await session.get() };
      },
    );
    expect(outcome.stdout).toEqual(["data", "refused"]);
    expect(outcome.info.binds).toEqual([{ source: "/data/in", dest: "/mnt/data", readonly: true }]);
    expect(texts((await sandbox.commands.run("ls /data/in")).logs.stdout)).toEqual(["d.txt"]);
  });
});

/**
 * Processes and threads of the whole sandbox, counted from its /proc by a command of its own,
 * which leaves out itself and its children, and execd's idle warm shells (one is started after
 * each command, so whether it exists yet when the next command looks is a race). Then the
 * processes, one line each, for the failure message.
 */
const countScript = [
  "p=0; t=0; list=''",
  "for d in /proc/[0-9]*; do",
  '  pid=${d#/proc/}; [ "$pid" = $$ ] && continue',
  // name, state, parent and threads on one line; gone already: skipped.
  "  fields=$(awk '/^(Name|State|PPid|Threads):/{printf \"%s \", $2}' $d/status 2>/dev/null) || continue",
  '  set -- $fields; [ $# -eq 4 ] && [ "$3" != $$ ] || continue',
  "  tr '\\0' ' ' < $d/cmdline 2>/dev/null | grep -q __paddock_n && continue",
  '  p=$((p+1)); t=$((t+$4)); list="$list$pid $1 $2\\n"',
  "done",
  'echo $p $t; printf "$list"',
].join("\n");

describe.each(["gvisor", "runc"] as const)("isolated sessions under %s", (runtime) => {
  let t: TestServer;
  let sandbox: Sandbox;

  const counts = async () => {
    const result = await sandbox.commands.run(countScript);
    const [totals, ...processList] = texts(result.logs.stdout).join("\n").split("\n");
    const [processes, threads] = totals?.split(" ").map(Number) ?? [];
    return { processes, threads, processList: processList.filter(Boolean) };
  };
  const same = (a: { processes?: number; threads?: number }, b: { processes?: number; threads?: number }) =>
    a.processes === b.processes && a.threads === b.threads;

  beforeAll(async () => {
    t = await startTestServer({ config: { secure_runtime: { type: runtime === "runc" ? "" : "gvisor" } } });
    sandbox = await Sandbox.create({
      connectionConfig: new ConnectionConfig({ domain: t.url, apiKey: t.apiKey, requestTimeoutSeconds: 60 }),
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
      timeoutSeconds: 600,
      // Both cores of a CI machine: the 100 sessions below each start a Node agent.
      resource: { cpu: "2" },
    });
    const setup = await sandbox.commands.run(
      "mkdir -p /workspace /data/in && echo data > /data/in/d.txt && ln -s /etc /data/etc",
    );
    expect(setup.exitCode).toBe(0);
  });
  afterAll(async () => {
    await sandbox?.kill();
    await t?.dispose();
  });

  test("a session's shell is numbered from its own PID namespace", async () => {
    await sandbox.isolation.withSession(
      { workspace: { path: "/workspace", mode: "overlay" } },
      async (session) => {
        // As under OpenSandbox (bwrap is PID 1, the shell PID 2); before, the shell came after the
        // session's own setup and its agent's threads (12 to 15).
        const first = await session.run("echo $$");
        expect(Number(texts(first.logs.stdout)[0])).toBeLessThanOrEqual(2);
        // The shell survives its runs; `kill $$` ends it (it is not its namespace's init) and the
        // next run has a new one, again numbered from the start.
        const gone = await session.run("kill $$");
        expect(gone.error).toBeDefined();
        const again = await session.run("echo $$");
        expect(Number(texts(again.logs.stdout)[0])).toBeLessThanOrEqual(2);
      },
    );
  });

  test("binds take only sources under the writable paths, and refuse the rest with 400", async () => {
    // The SDK's isolation client reports a refusal as an Error: "POST <path> failed: <status> <body>".
    const refusal = async (spec: Parameters<Sandbox["isolation"]["create"]>[0]) => {
      const error = await sandbox.isolation.create(spec).then(
        async (session) => {
          await session.delete();
          return undefined;
        },
        (failure: unknown) => failure,
      );
      const found = /failed: (\d+) (.*)$/s.exec(error instanceof Error ? error.message : "");
      return { statusCode: Number(found?.[1]), ...JSON.parse(found?.[2] ?? "{}") };
    };
    const workspace = { path: "/workspace", mode: "overlay" } as const;
    for (const spec of [
      { workspace, binds: [{ source: "/etc", dest: "/mnt/etc" }] },
      { workspace, binds: [{ source: "/etc", dest: "/mnt/etc", readonly: true }] },
      // A symlink under an allowed path is judged by where it leads.
      { workspace, binds: [{ source: "/data/etc", dest: "/mnt/etc", readonly: true }] },
      { workspace, extra_writable: ["/root"] },
    ]) {
      expect(await refusal(spec)).toEqual({
        statusCode: 400,
        code: "bind_not_allowed",
        message: expect.stringContaining("/workspace, /mnt, /media, /data"),
      });
    }
    // A path under an allowed one is bound.
    const allowed = await sandbox.isolation.withSession(
      { workspace, binds: [{ source: "/data/in", dest: "/srv/in", readonly: true }] },
      async (session) => texts((await session.run("cat /srv/in/d.txt")).logs.stdout),
    );
    expect(allowed).toEqual(["data"]);
  });

  test("100 created, used and deleted sessions leave the sandbox's processes and threads as they were", {
    timeout: 240_000,
  }, async () => {
    const cycle = async () => {
      const session = await sandbox.isolation.create({ workspace: { path: "/workspace", mode: "overlay" } });
      try {
        // Opens the session's shell (PID 2 of its own namespace, every time) and leaves a
        // background job, a daemon in a session of its own and a process in a nested PID
        // namespace: none of them may outlive the session.
        const run = await session.run(
          "sleep 600 & setsid sleep 600 < /dev/null > /dev/null 2>&1 & unshare -p -f sleep 600 < /dev/null > /dev/null 2>&1 & echo $$",
        );
        expect(Number(texts(run.logs.stdout)[0])).toBeLessThanOrEqual(2);
      } finally {
        await session.delete();
      }
    };
    // The first session warms execd up (its thread pool); the counts start after it.
    await cycle();
    const before = await counts();
    // At least the sandbox's init, its entrypoint and execd.
    expect(before.processes).toBeGreaterThanOrEqual(3);
    expect(before.processList).toHaveLength(before.processes ?? 0);
    // Four at a time, for speed. Before, each deleted session left its agent and shell behind
    // under gVisor, and creating sessions failed (EAGAIN) within about 25.
    for (let round = 0; round < 25; round++) await Promise.all([cycle(), cycle(), cycle(), cycle()]);
    // Killed processes are reaped by the sandbox's init a moment later.
    let after = await counts();
    for (const deadline = Date.now() + 15_000; !same(after, before) && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await counts();
    }
    expect(
      { processes: after.processes, threads: after.threads },
      `before:\n${before.processList.join("\n")}\nafter:\n${after.processList.join("\n")}`,
    ).toEqual({ processes: before.processes, threads: before.threads });
  });
});
