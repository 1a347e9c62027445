import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXECD_PORT } from "@paddock/common";
import { describe, expect, test } from "vitest";
import { countProcesses, type ExecdClient, sandboxPerSuite } from "./client.js";

const workspace = "/workspace";

/** Creates an isolated session over the workspace; its id. */
async function createSession(execd: ExecdClient, body: Record<string, unknown> = {}): Promise<string> {
  const response = await execd.fetch("/v1/isolated/session", {
    method: "POST",
    body: JSON.stringify({ workspace: { path: workspace, mode: "overlay" }, ...body }),
  });
  const answer = (await response.json()) as { session_id: string; created_at: string };
  expect(response.status, JSON.stringify(answer)).toBe(201);
  expect(answer.session_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(Date.parse(answer.created_at)).not.toBeNaN();
  return answer.session_id;
}

/** Runs shell code in a session in the foreground: stdout, stderr (exact bytes) and the terminal event. */
async function runIn(
  execd: ExecdClient,
  session: string,
  code: string,
  options: Record<string, unknown> = {},
) {
  const { stdout, stderr, last } = await execd.output(`/v1/isolated/session/${session}/run`, {
    code,
    ...options,
  });
  return { stdout, stderr, last };
}

/** The entries of a tar archive, listed and extracted by the host's GNU tar. */
function untar(archive: Buffer): { names: string[]; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "paddock-isolated-diff-"));
  const names = execFileSync("tar", ["-tf", "-"], { input: archive, encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
  execFileSync("tar", ["-xf", "-", "-C", dir, "--no-same-owner"], { input: archive });
  return { names, dir };
}

describe("execd isolated sessions under runc", () => {
  let execd: ExecdClient;
  sandboxPerSuite(
    "runc",
    { image: { uri: "paddock/base:bookworm" } },
    (made) => {
      execd = made;
    },
    async () => {
      const setup = await execd.run(
        [
          `mkdir -p ${workspace}/src ${workspace}/old-dir`,
          `echo original > ${workspace}/src/keep.txt`,
          `echo change-me > ${workspace}/change.txt`,
          `echo bye > ${workspace}/delete-me.txt`,
          `echo x > ${workspace}/old-dir/x.txt`,
        ].join(" && "),
      );
      expect(setup.exitCode).toBe(0);
    },
  );

  test("capabilities say what this runtime allows", async () => {
    const capabilities = await execd.json("/v1/isolated/capabilities");
    expect(capabilities).toMatchObject({
      available: true,
      isolator: "paddock-overlay",
      overlay: true,
      mount_namespace: true,
      pid_namespace: true,
      diff_supported: true,
      commit_supported: true,
      userns_available: true,
      binds_supported: true,
      features: {
        user_namespace: { available: true },
        mount_namespace: { available: true },
        pid_namespace: { available: true },
        overlay: { available: true },
        binds: { available: true },
        locked_mounts: { available: true },
        locked_read_only: { available: true },
        network_namespace: { available: false, reason: expect.stringMatching(/seccomp/) },
        diff: { available: true },
        commit: { available: true },
      },
    });
    // Docker masks parts of the sandbox's /proc, so the kernel refuses a fresh one in a user
    // namespace: capabilities say so, and why, rather than claim a private /proc.
    expect(capabilities.private_proc).toBe(false);
    expect(capabilities.features.private_proc).toMatchObject({
      available: false,
      reason: expect.stringMatching(/fully visible.*masks.*the runtime said: .*[Pp]ermission denied/),
    });
    expect(capabilities.message).toMatch(/^private_proc: /);
  });

  test("a session sees the workspace, and its writes stay out of it until commit", async () => {
    const id = await createSession(execd);
    const seen = await runIn(execd, id, "pwd; cat src/keep.txt change.txt");
    expect(seen.stdout).toBe(`${workspace}\noriginal\nchange-me\n`);
    expect(seen.last).toMatchObject({ type: "execution_complete", exit_code: 0 });

    const changed = await runIn(
      execd,
      id,
      [
        "echo new > new.txt",
        "echo changed > change.txt",
        "rm delete-me.txt",
        "rm -rf old-dir",
        "mkdir -p deep/er && echo deep > deep/er/file.txt",
        "ln -s src/keep.txt link",
        "ls",
      ].join(" && "),
    );
    expect(changed.stdout.split("\n").filter(Boolean), changed.stderr).toEqual([
      "change.txt",
      "deep",
      "link",
      "new.txt",
      "src",
    ]);

    // The sandbox's own view of the workspace has not moved.
    const outside = await execd.run(`cd ${workspace} && ls && cat change.txt`);
    expect(outside.stdout).toBe("change.txt\ndelete-me.txt\nold-dir\nsrc\nchange-me\n");

    // The files routes of the session show its merged tree.
    const download = await execd.fetch(`/v1/isolated/session/${id}/files/download?path=${workspace}/new.txt`);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("new\n");
    const listing = (await execd.json(
      `/v1/isolated/session/${id}/directories/list?path=${workspace}&depth=1`,
    )) as Array<{ path: string }>;
    const listed = listing.map((entry) => entry.path);
    expect(listed).toContain(`${workspace}/new.txt`);
    expect(listed).not.toContain(`${workspace}/delete-me.txt`);
    const form = new FormData();
    form.append("metadata", new Blob([JSON.stringify({ path: `${workspace}/uploaded.txt` })]));
    form.append("file", new Blob(["through the session\n"]), "upload");
    const upload = await execd.fetch(`/v1/isolated/session/${id}/files/upload`, {
      method: "POST",
      body: form,
    });
    expect(upload.status).toBe(200);
    expect((await runIn(execd, id, "cat uploaded.txt")).stdout).toBe("through the session\n");
    expect((await execd.run(`test -e ${workspace}/uploaded.txt; echo $?`)).stdout).toBe("1\n");
    const missing = await execd.fetch(
      `/v1/isolated/session/${id}/files/info?path=${workspace}/delete-me.txt`,
    );
    expect(missing.status).toBe(404);

    // The diff holds the new, changed and deleted entries (deletions as OCI whiteouts).
    const diff = await execd.fetch(`/v1/isolated/session/${id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.headers.get("content-type")).toBe("application/x-tar");
    const { names, dir } = untar(Buffer.from(await diff.arrayBuffer()));
    try {
      expect(names).toEqual(
        expect.arrayContaining([
          "change.txt",
          "new.txt",
          "uploaded.txt",
          ".wh.delete-me.txt",
          ".wh.old-dir",
          "deep/",
          "deep/er/",
          "deep/er/file.txt",
          "link",
        ]),
      );
      expect(names.some((name) => name.startsWith("src"))).toBe(false);
      expect(readFileSync(join(dir, "change.txt"), "utf8")).toBe("changed\n");
      expect(readFileSync(join(dir, "deep/er/file.txt"), "utf8")).toBe("deep\n");
      expect(readFileSync(join(dir, ".wh.delete-me.txt"), "utf8")).toBe("");
      expect(readlinkSync(join(dir, "link"))).toBe("src/keep.txt");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Commit applies all of it to the real workspace, deletions included.
    const commit = await execd.fetch(`/v1/isolated/session/${id}/commit`, { method: "POST" });
    expect(commit.status).toBe(200);
    expect(await commit.json()).toMatchObject({ deleted: 2, symlinks: 1 });
    const after = await execd.run(
      `cd ${workspace} && ls && cat change.txt new.txt deep/er/file.txt && readlink link`,
    );
    expect(after.stdout).toBe(
      "change.txt\ndeep\nlink\nnew.txt\nsrc\nuploaded.txt\nchanged\nnew\ndeep\nsrc/keep.txt\n",
    );
    expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
  });

  test("two sessions do not see each other's changes", async () => {
    const [first, second] = await Promise.all([createSession(execd), createSession(execd)]);
    await runIn(execd, first, "echo first > only-first.txt");
    await runIn(execd, second, "echo second > only-second.txt");
    expect((await runIn(execd, first, "ls only-*")).stdout).toBe("only-first.txt\n");
    expect((await runIn(execd, second, "ls only-*")).stdout).toBe("only-second.txt\n");
    const listed = (await execd.json("/v1/isolated/sessions")) as { sessions: Array<{ session_id: string }> };
    expect(listed.sessions.map((session) => session.session_id)).toEqual(
      expect.arrayContaining([first, second]),
    );
    for (const id of [first, second])
      expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
  });

  test("a session has its own PID namespace and cannot signal anything outside it", async () => {
    const outside = await execd.run("sleep 4711 >/dev/null 2>&1 & echo $!");
    const outsidePid = Number(outside.stdout.trim());
    expect(outsidePid).toBeGreaterThan(1);
    const first = await createSession(execd);
    const second = await createSession(execd);
    const sandboxPidNamespace = (await execd.run("readlink /proc/self/ns/pid")).stdout;
    const inFirst = await runIn(
      execd,
      first,
      `readlink /proc/self/ns/pid; kill -0 ${outsidePid} 2>/dev/null && echo reached || echo unreachable; sleep 4712 >/dev/null 2>&1 & echo $!`,
    );
    const [namespace, reach, sleeperPid] = inFirst.stdout.trim().split("\n");
    expect(namespace).toMatch(/^pid:\[\d+\]$/);
    expect(`${namespace}\n`).not.toBe(sandboxPidNamespace);
    expect(reach).toBe("unreachable");
    // The sandbox reaches its own process; the other session does not reach the first one's.
    expect((await execd.run(`kill -0 ${outsidePid} && echo reached`)).stdout).toBe("reached\n");
    const inSecond = await runIn(
      execd,
      second,
      `readlink /proc/self/ns/pid; kill -0 ${sleeperPid} 2>/dev/null && echo reached || echo unreachable`,
    );
    const [secondNamespace, secondReach] = inSecond.stdout.trim().split("\n");
    expect(secondNamespace).not.toBe(namespace);
    expect(secondReach).toBe("unreachable");

    // Deleting the session ends every process in it.
    expect((await execd.run(countProcesses("sleep 4712"))).stdout.trim()).toBe("1");
    expect((await execd.fetch(`/v1/isolated/session/${first}`, { method: "DELETE" })).status).toBe(200);
    await expect.poll(async () => (await execd.run(countProcesses("sleep 4712"))).stdout.trim()).toBe("0");
    expect((await execd.fetch(`/v1/isolated/session/${first}`)).status).toBe(404);
    expect((await execd.run("ls /run/paddock-isolated")).stdout).not.toContain(first);
    expect((await execd.fetch(`/v1/isolated/session/${second}`, { method: "DELETE" })).status).toBe(200);
    await execd.run(`kill ${outsidePid}`);
  });

  test("background runs report status and logs; state echoes the create request", async () => {
    const id = await createSession(execd, { profile: "balanced", idle_timeout_seconds: 600 });
    const started = await execd.fetch(`/v1/isolated/session/${id}/run`, {
      method: "POST",
      body: JSON.stringify({ code: "echo one; sleep 0.5; echo two >&2; exit 3", background: true }),
    });
    expect(started.status).toBe(202);
    const handle = (await started.json()) as { session_id: string; run_id: string; started_at: string };
    expect(handle.session_id).toBe(id);
    await expect
      .poll(async () => (await execd.json(`/v1/isolated/session/${id}/runs/${handle.run_id}`)).running)
      .toBe(false);
    expect(await execd.json(`/v1/isolated/session/${id}/runs/${handle.run_id}`)).toMatchObject({
      session_id: id,
      run_id: handle.run_id,
      running: false,
      exit_code: 3,
    });
    const logs = await execd.fetch(`/v1/isolated/session/${id}/runs/${handle.run_id}/logs`);
    expect(await logs.text()).toBe("one\ntwo\n");
    const cursor = logs.headers.get("EXECD-ISOLATED-TAIL-CURSOR");
    expect(cursor).toBe("8");
    const tail = await execd.fetch(`/v1/isolated/session/${id}/runs/${handle.run_id}/logs?cursor=4`);
    expect(await tail.text()).toBe("two\n");

    const state = await execd.json(`/v1/isolated/session/${id}`);
    expect(state).toMatchObject({
      status: "active",
      profile: "balanced",
      workspace: { path: workspace, mode: "overlay" },
      idle_timeout_seconds: 600,
      uid: 0,
      gid: 0,
    });
    expect(state.idle_remaining_seconds).toBeGreaterThan(590);

    const timedOut = await execd.events(`/v1/isolated/session/${id}/run`, {
      code: "sleep 30",
      timeout_seconds: 1,
    });
    expect(timedOut.at(-1)).toMatchObject({ type: "error", error: { ename: "CommandTimeout" } });
    expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
  });

  test("strict sessions see the rest of the filesystem read-only and have their own /tmp", async () => {
    const id = await createSession(execd, { profile: "strict" });
    const inside = await runIn(
      execd,
      id,
      "touch /etc/strict 2>&1 | grep -o 'Read-only file system'; echo private > /tmp/strict.txt && cat /tmp/strict.txt; echo ws > in-workspace.txt && cat in-workspace.txt",
    );
    expect(inside.stdout).toBe("Read-only file system\nprivate\nws\n");
    expect((await execd.run("test -e /tmp/strict.txt; echo $?; test -e /etc/strict; echo $?")).stdout).toBe(
      "1\n1\n",
    );
    // A balanced session shares the sandbox's /tmp.
    const balanced = await createSession(execd);
    await runIn(execd, balanced, "echo shared > /tmp/balanced.txt");
    expect((await execd.run("cat /tmp/balanced.txt")).stdout).toBe("shared\n");
    for (const session of [id, balanced])
      expect((await execd.fetch(`/v1/isolated/session/${session}`, { method: "DELETE" })).status).toBe(200);
  });

  test("a directory removed and made again, and entries that change type, diff and commit right", async () => {
    await execd.run(
      `mkdir -p ${workspace}/remade ${workspace}/to-file && echo old > ${workspace}/remade/old.txt && echo f > ${workspace}/to-dir && echo y > ${workspace}/to-file/y`,
    );
    const id = await createSession(execd);
    const changed = await runIn(
      execd,
      id,
      "rm -rf remade && mkdir remade && echo new > remade/new.txt && rm to-dir && mkdir to-dir && echo c > to-dir/c && rm -rf to-file && echo now > to-file",
    );
    expect(changed.last).toMatchObject({ type: "execution_complete" });
    const { names, dir } = untar(
      Buffer.from(await (await execd.fetch(`/v1/isolated/session/${id}/diff`)).arrayBuffer()),
    );
    rmSync(dir, { recursive: true, force: true });
    expect(names).toEqual(
      expect.arrayContaining([
        "remade/",
        "remade/.wh.old.txt",
        "remade/new.txt",
        "to-dir/",
        "to-dir/c",
        "to-file",
      ]),
    );
    expect((await execd.fetch(`/v1/isolated/session/${id}/commit`, { method: "POST" })).status).toBe(200);
    const after = await execd.run(`cd ${workspace} && ls remade && cat to-dir/c to-file`);
    expect(after.stdout).toBe("new.txt\nc\nnow\n");
    expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
  });

  test("a session whose processes died says so and can still be deleted", async () => {
    const id = await createSession(execd);
    // The session's init is the tini whose child is the agent; killing it ends the namespace.
    const killed = await execd.run(
      `for f in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $f/cmdline 2>/dev/null); case "$c" in "/opt/paddock/bin/tini -- "*) grep -q "${id}" $f/environ 2>/dev/null && kill -9 \${f#/proc/} && echo killed;; esac; done`,
    );
    expect(killed.stdout).toBe("killed\n");
    await expect.poll(async () => (await execd.json(`/v1/isolated/session/${id}`)).status).toBe("dead");
    const run = await execd.fetch(`/v1/isolated/session/${id}/run`, {
      method: "POST",
      body: '{"code":"true"}',
    });
    expect(run.status).toBe(409);
    expect(await run.json()).toMatchObject({ code: "session_dead" });
    expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
  });

  test("an idle session is collected", async () => {
    const id = await createSession(execd, { idle_timeout_seconds: 1 });
    await expect
      .poll(async () => (await execd.fetch(`/v1/isolated/session/${id}`)).status, { timeout: 10_000 })
      .toBe(404);
  });

  test("read-only and read-write workspaces; diff and commit need an overlay", async () => {
    const readOnly = await createSession(execd, { workspace: { path: workspace, mode: "ro" } });
    const denied = await runIn(execd, readOnly, "echo x > ro.txt");
    expect(denied.last).toMatchObject({ type: "error" });
    expect(denied.stderr).toMatch(/Read-only file system/);
    const diff = await execd.fetch(`/v1/isolated/session/${readOnly}/diff`);
    expect(diff.status).toBe(400);
    expect(await diff.json()).toMatchObject({ code: "not_an_overlay" });
    expect((await execd.fetch(`/v1/isolated/session/${readOnly}`, { method: "DELETE" })).status).toBe(200);
  });

  test("bad input is a 4xx with a code and creates nothing", async () => {
    const before = (await execd.json("/v1/isolated/sessions")).sessions.length;
    // Like every execd route, isolated ones need the sandbox's own token.
    for (const token of [undefined, "another-sandbox"]) {
      const refused = await fetch(`${execd.base}/v1/isolated/session`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { "X-EXECD-ACCESS-TOKEN": token } : {}) },
        body: JSON.stringify({ workspace: { path: workspace } }),
      });
      expect(refused.status).toBe(401);
    }
    const cases: Array<[string, string, string | undefined, number, string]> = [
      ["POST", "/v1/isolated/session", "{oops", 400, "invalid_json"],
      ["POST", "/v1/isolated/session", "{}", 400, "invalid_request"],
      ["POST", "/v1/isolated/session", '{"workspace":{"path":"relative"}}', 400, "invalid_request"],
      ["POST", "/v1/isolated/session", '{"workspace":{"path":"/"}}', 400, "invalid_request"],
      ["POST", "/v1/isolated/session", '{"workspace":{"path":"/proc/self"}}', 400, "invalid_request"],
      ["POST", "/v1/isolated/session", '{"workspace":{"path":"/nowhere"}}', 400, "invalid_request"],
      ["POST", "/v1/isolated/session", '{"workspace":{"path":"/a,b"}}', 400, "invalid_request"],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace","mode":"cow"}}',
        400,
        "invalid_request",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"uid":1000}',
        501,
        "not_supported",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"share_net":false}',
        501,
        "not_supported",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"binds":[{"source":"/nowhere"}]}',
        400,
        "invalid_request",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"binds":[{"source":"/etc","dest":"/mnt/etc"}]}',
        400,
        "bind_not_allowed",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"binds":{}}',
        400,
        "invalid_request",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"binds":[{"source":"tmp"}]}',
        400,
        "invalid_request",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"binds":[{"source":"/tmp","dest":"/proc/x"}]}',
        400,
        "invalid_request",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"binds":[{"source":"/tmp","readonly":"yes"}]}',
        400,
        "invalid_request",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"extra_writable":["/a/../etc"]}',
        400,
        "invalid_request",
      ],
      [
        "POST",
        "/v1/isolated/session",
        '{"workspace":{"path":"/workspace"},"idle_timeout_seconds":0}',
        400,
        "invalid_request",
      ],
      ["GET", "/v1/isolated/session", undefined, 405, "method_not_allowed"],
      [
        "GET",
        "/v1/isolated/session/00000000-0000-0000-0000-000000000000",
        undefined,
        404,
        "session_not_found",
      ],
      [
        "DELETE",
        "/v1/isolated/session/00000000-0000-0000-0000-000000000000",
        undefined,
        404,
        "session_not_found",
      ],
      [
        "GET",
        "/v1/isolated/session/00000000-0000-0000-0000-000000000000/diff",
        undefined,
        404,
        "session_not_found",
      ],
      [
        "POST",
        "/v1/isolated/session/00000000-0000-0000-0000-000000000000/commit",
        undefined,
        404,
        "session_not_found",
      ],
      ["GET", "/v1/isolated/nowhere", undefined, 404, "not_found"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const response = await execd.fetch(path, { method, ...(body === undefined ? {} : { body }) });
      expect(response.status, `${method} ${path} ${body}`).toBe(status);
      expect(await response.json()).toMatchObject({ code, message: expect.any(String) });
    }
    const id = await createSession(execd);
    for (const [path, body, status] of [
      [`/v1/isolated/session/${id}/run`, "{}", 400],
      [`/v1/isolated/session/${id}/run`, '{"code":"true","background":"yes"}', 400],
      [`/v1/isolated/session/${id}/run`, '{"code":"true","timeout_seconds":-1}', 400],
      [`/v1/isolated/session/${id}/run`, '{"code":"true","envs":{"A B":"x"}}', 400],
    ] as const) {
      const response = await execd.fetch(path, { method: "POST", body });
      expect(response.status, `${path} ${body}`).toBe(status);
    }
    const unknownRun = await execd.fetch(`/v1/isolated/session/${id}/runs/nope`);
    expect(unknownRun.status).toBe(404);
    expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await execd.json("/v1/isolated/sessions")).sessions.length).toBe(before);
  });
});

describe("execd isolated sessions under gvisor", () => {
  let execd: ExecdClient;
  sandboxPerSuite(
    "gvisor",
    { image: { uri: "paddock/base:bookworm" } },
    (made) => {
      execd = made;
    },
    async () => {
      const setup = await execd.run(
        `mkdir -p ${workspace}/old-dir && echo x > ${workspace}/old-dir/x.txt && echo change-me > ${workspace}/change.txt`,
      );
      expect(setup.exitCode).toBe(0);
    },
  );

  test("capabilities: everything a session needs works, a private /proc included", async () => {
    const capabilities = await execd.json("/v1/isolated/capabilities");
    expect(capabilities).toMatchObject({
      available: true,
      overlay: true,
      mount_namespace: true,
      pid_namespace: true,
      private_proc: true,
      binds_supported: true,
      diff_supported: true,
      commit_supported: true,
    });
    const { locked_read_only, ...others } = capabilities.features;
    for (const feature of Object.values(others)) expect(feature).toEqual({ available: true });
    // gVisor lets a nested user namespace remount an inherited read-only mount read-write.
    expect(locked_read_only).toEqual({
      available: false,
      reason: expect.stringMatching(/MNT_LOCK_READONLY/),
    });
    expect(capabilities.message).toMatch(/^locked_read_only: /);
  });

  test("an overlay session keeps its writes to itself; diff and commit carry them over", async () => {
    const id = await createSession(execd);
    const changed = await runIn(
      execd,
      id,
      "echo new > new.txt && echo changed > change.txt && rm -rf old-dir && ls",
    );
    expect(changed.stdout, changed.stderr).toBe("change.txt\nnew.txt\n");
    expect((await execd.run(`ls ${workspace}; cat ${workspace}/change.txt`)).stdout).toBe(
      "change.txt\nold-dir\nchange-me\n",
    );
    const { names, dir } = untar(
      Buffer.from(await (await execd.fetch(`/v1/isolated/session/${id}/diff`)).arrayBuffer()),
    );
    rmSync(dir, { recursive: true, force: true });
    expect(names.sort()).toEqual([".wh.old-dir", "change.txt", "new.txt"]);
    const commit = await execd.fetch(`/v1/isolated/session/${id}/commit`, { method: "POST" });
    expect(commit.status).toBe(200);
    expect((await execd.run(`ls ${workspace}; cat ${workspace}/change.txt`)).stdout).toBe(
      "change.txt\nnew.txt\nchanged\n",
    );
    expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
  });
});

describe.each(["runc", "gvisor"] as const)(
  "execd isolated sessions under %s: shell, binds, locks, /proc",
  (secure) => {
    let execd: ExecdClient;
    sandboxPerSuite(
      secure,
      { image: { uri: "paddock/base:bookworm" } },
      (made) => {
        execd = made;
      },
      async () => {
        const setup = await execd.run(
          `mkdir -p ${workspace} /media/data /media/out && echo data > /media/data/d.txt && echo file > /media/one.txt`,
        );
        expect(setup.exitCode).toBe(0);
      },
    );

    test("runs of one session share one shell: directory, variables and functions carry over", async () => {
      const id = await createSession(execd);
      expect((await runIn(execd, id, "cd /tmp && export X=1 && greet() { echo hi $1; }")).last).toMatchObject(
        {
          type: "execution_complete",
        },
      );
      expect((await runIn(execd, id, 'pwd; echo "X=$X"; greet there')).stdout).toBe("/tmp\nX=1\nhi there\n");
      // envs are exported into the shell before the code runs, and stay.
      expect((await runIn(execd, id, "echo $Y", { envs: { Y: "it's y" } })).stdout).toBe("it's y\n");
      expect((await runIn(execd, id, "echo $Y")).stdout).toBe("it's y\n");
      // Another session has a shell of its own, in its workspace.
      const other = await createSession(execd);
      expect((await runIn(execd, other, 'pwd; echo "X=$X"')).stdout).toBe(`${workspace}\nX=\n`);
      // A client that goes away ends its run and the shell: the next run does not wait for it.
      const leaving = new AbortController();
      const abandoned = execd.fetch(`/v1/isolated/session/${id}/run`, {
        method: "POST",
        body: JSON.stringify({ code: "sleep 4714" }),
        signal: leaving.signal,
      });
      await expect.poll(async () => (await execd.run(countProcesses("sleep 4714"))).stdout.trim()).toBe("1");
      leaving.abort();
      await abandoned.then((response) => response.body?.cancel()).catch(() => undefined);
      await expect.poll(async () => (await execd.run(countProcesses("sleep 4714"))).stdout.trim()).toBe("0");
      expect((await runIn(execd, id, 'pwd; echo "X=$X"')).stdout).toBe(`${workspace}\nX=\n`);
      await runIn(execd, id, "cd /tmp && export X=1");
      // A run that times out ends the shell; the next run gets a new one in the workspace.
      const timedOut = await runIn(execd, id, "sleep 30", { timeout_seconds: 1 });
      expect(timedOut.last).toMatchObject({ type: "error", error: { ename: "CommandTimeout" } });
      expect((await runIn(execd, id, 'pwd; echo "X=$X"')).stdout).toBe(`${workspace}\nX=\n`);
      for (const session of [id, other])
        expect((await execd.fetch(`/v1/isolated/session/${session}`, { method: "DELETE" })).status).toBe(200);
    });

    test("a session over /tmp: its diff holds the session's files only, none of execd's", async () => {
      const id = await createSession(execd, { workspace: { path: "/tmp", mode: "overlay" } });
      expect((await runIn(execd, id, "echo a > a.txt && cd /tmp && echo $TMPDIR")).stdout).toBe("\n");
      const { names, dir } = untar(
        Buffer.from(await (await execd.fetch(`/v1/isolated/session/${id}/diff`)).arrayBuffer()),
      );
      rmSync(dir, { recursive: true, force: true });
      expect(names).toEqual(["a.txt"]);
      expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
    });

    test("share_net: false takes a session off the network where the runtime allows it", async () => {
      // execd listens in the sandbox: reachable from the sandbox and from a session sharing its network.
      const connect = `timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${EXECD_PORT}' 2>/dev/null && echo open || echo closed`;
      expect((await execd.run(connect)).stdout).toBe("open\n");
      const shared = await createSession(execd);
      expect((await runIn(execd, shared, connect)).stdout).toBe("open\n");
      const response = await execd.fetch("/v1/isolated/session", {
        method: "POST",
        body: JSON.stringify({ workspace: { path: workspace }, share_net: false }),
      });
      const body = (await response.json()) as { session_id: string; code: string; message: string };
      if (secure === "runc") {
        // The seccomp profile keeps network namespaces out of runc sandboxes (decision 0090).
        expect(response.status).toBe(501);
        expect(body).toMatchObject({ code: "not_supported", message: expect.stringMatching(/share_net/) });
      } else {
        // gVisor gives a new network namespace no network stack at all, loopback included.
        expect(response.status, JSON.stringify(body)).toBe(201);
        expect((await runIn(execd, body.session_id, connect)).stdout).toBe("closed\n");
        expect((await execd.json(`/v1/isolated/session/${body.session_id}`)).share_net).toBe(false);
        expect(
          (await execd.fetch(`/v1/isolated/session/${body.session_id}`, { method: "DELETE" })).status,
        ).toBe(200);
      }
      expect((await execd.fetch(`/v1/isolated/session/${shared}`, { method: "DELETE" })).status).toBe(200);
    });

    test("binds mount sandbox paths into the session, read-only or read-write", async () => {
      const id = await createSession(execd, {
        binds: [
          { source: "/media/data", dest: "/mnt/data", readonly: true },
          { source: "/media/out" },
          { source: "/media/one.txt", dest: `${workspace}/one.txt`, readonly: true },
        ],
        extra_writable: ["/media/data"],
      });
      const inside = await runIn(
        execd,
        id,
        [
          "cat /mnt/data/d.txt one.txt",
          "echo x > /mnt/data/new.txt 2>&1 || echo refused",
          "echo x > one.txt || echo refused",
          "echo written > /media/out/o.txt && echo wrote",
          "echo also > /media/data/w.txt && echo wrote",
        ].join("; "),
      );
      expect(inside.stdout, inside.stderr).toBe("data\nfile\nrefused\nrefused\nwrote\nwrote\n");
      expect(inside.stderr).toMatch(/Read-only file system/);
      // Read-write binds write through to the sandbox; read-only ones leave it untouched.
      expect((await execd.run("cat /media/out/o.txt /media/data/w.txt; ls /media/data")).stdout).toBe(
        "written\nalso\nd.txt\nw.txt\n",
      );
      const state = await execd.json(`/v1/isolated/session/${id}`);
      expect(state.binds).toEqual([
        { source: "/media/data", dest: "/mnt/data", readonly: true },
        { source: "/media/out", dest: "/media/out", readonly: false },
        { source: "/media/one.txt", dest: `${workspace}/one.txt`, readonly: true },
        { source: "/media/data", dest: "/media/data", readonly: false },
      ]);
      expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
    });

    test("a session cannot undo its own mounts to reach the real workspace or write a read-only bind", async () => {
      const id = await createSession(execd, {
        binds: [{ source: "/media/data", dest: "/mnt/data", readonly: true }],
      });
      const attempts = await runIn(
        execd,
        id,
        [
          `umount -l ${workspace} 2>/dev/null && echo unmounted`,
          "mount -o remount,rw /mnt/data 2>/dev/null; (echo x > /mnt/data/x) 2>/dev/null && echo wrote-read-only",
          "umount -l /mnt/data 2>/dev/null && echo unmounted-bind",
          "echo escaped > escape.txt",
          "true",
        ].join("; "),
      );
      expect(attempts.stdout).toBe("");
      expect(
        (await execd.run(`test -e ${workspace}/escape.txt; echo $?; test -e /media/data/x; echo $?`)).stdout,
      ).toBe("1\n1\n");
      expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
    });

    test("a session's /proc lists only its own processes where the runtime allows a fresh one", async () => {
      const outside = await execd.run("sleep 4713 >/dev/null 2>&1 & echo $!");
      expect(Number(outside.stdout.trim())).toBeGreaterThan(1);
      const id = await createSession(execd);
      const listed = await runIn(
        execd,
        id,
        `ls /proc | grep -c '^[0-9]'; ${countProcesses("sleep 4713")}; kill -0 ${outside.stdout.trim()} 2>/dev/null && echo reached || echo unreachable`,
      );
      const [processes, outsideSeen, reach] = listed.stdout.trim().split("\n");
      expect(reach).toBe("unreachable");
      const capabilities = await execd.json("/v1/isolated/capabilities");
      if (secure === "gvisor") {
        expect(capabilities.private_proc).toBe(true);
        // The shell's own /proc: its init, the shell, and the pipeline's ls and grep.
        expect(Number(processes)).toBeLessThanOrEqual(4);
        expect(outsideSeen).toBe("0");
      } else {
        // runc: the kernel refuses a fresh /proc (capabilities say why), so the sandbox's shows through.
        expect(capabilities.private_proc).toBe(false);
        expect(outsideSeen).toBe("1");
      }
      expect((await execd.fetch(`/v1/isolated/session/${id}`, { method: "DELETE" })).status).toBe(200);
      await execd.run(`kill ${outside.stdout.trim()}`);
    });
  },
);
