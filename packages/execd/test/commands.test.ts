import { describe, expect, test } from "vitest";
import { countProcesses, type ExecdClient, sandboxPerSuite } from "./client.js";

describe.each(["gvisor", "runc"] as const)("execd commands and sessions under %s", (secure) => {
  let execd: ExecdClient;
  sandboxPerSuite(
    secure,
    {
      image: { uri: "paddock/template-python:latest" },
      env: { SANDBOX_GREETING: "hi from env" },
    },
    (made) => {
      execd = made;
    },
  );

  test("every route needs the sandbox's token", async () => {
    expect((await fetch(`${execd.base}/ping`)).status).toBe(401);
    expect((await fetch(`${execd.base}/ping`, { headers: { "X-EXECD-ACCESS-TOKEN": "wrong" } })).status).toBe(
      401,
    );
    expect((await execd.fetch("/ping")).status).toBe(200);
    const body = await (await fetch(`${execd.base}/command`, { method: "POST" })).json();
    expect(body).toMatchObject({ code: "unauthorized" });
  });

  test("a foreground command streams init, output and its exit, then the stream ends", async () => {
    const ok = await execd.run("echo out; echo err >&2; echo $SANDBOX_GREETING; echo $EXTRA", {
      envs: { EXTRA: "per-call" },
    });
    expect(ok.events[0]?.type).toBe("init");
    expect(ok.stdout).toBe("out\nhi from env\nper-call\n");
    expect(ok.stderr).toBe("err\n");
    expect(ok.last).toMatchObject({ type: "execution_complete", exit_code: 0 });
    const failed = await execd.run("cd /tmp && pwd && exit 3", {});
    expect(failed.stdout).toBe("/tmp\n");
    expect(failed.last).toMatchObject({
      type: "error",
      exit_code: 3,
      error: { ename: "CommandExecError", evalue: "3" },
    });
    const cwd = await execd.run("pwd; id -u; id -g", { cwd: "/var", uid: 65534, gid: 65534 });
    expect(cwd.stdout).toBe("/var\n65534\n65534\n");
    // The token never reaches user processes.
    expect((await execd.run("env")).stdout).not.toContain("PADDOCK_EXECD_TOKEN");
  });

  test("output goes out one event per line, as OpenSandbox's execd sends it, unless chunks are asked for", async () => {
    const printed = "printf 'n1\\nn2\\nn3\\n'; echo e1 >&2; printf 'last without newline'";
    const lines = await execd.events("/command", { command: printed });
    const texts = (events: typeof lines, type: string) =>
      events.filter((event) => event.type === type).map((event) => event.text);
    expect(texts(lines, "stdout")).toEqual(["n1", "n2", "n3", "last without newline"]);
    expect(texts(lines, "stderr")).toEqual(["e1"]);
    expect(lines.at(-1)).toMatchObject({ type: "execution_complete" });
    const chunks = await execd.run(printed);
    expect(chunks.stdout).toBe("n1\nn2\nn3\nlast without newline");
    expect(chunks.stderr).toBe("e1\n");
    const { session_id: session } = await execd.json("/session", { method: "POST", body: "{}" });
    const run = await execd.events(`/session/${session}/run`, { command: printed });
    expect(texts(run, "stdout")).toEqual(["n1", "n2", "n3", "last without newline"]);
    expect(texts(run, "stderr")).toEqual(["e1"]);
    const bad = await execd.fetch("/command", {
      method: "POST",
      body: '{"command":"true"}',
      headers: { "X-Paddock-Output-Framing": "bytes" },
    });
    expect(bad.status).toBe(400);
  });

  test("timeouts and interrupts kill the whole process group", async () => {
    const timedOut = await execd.run("sleep 4242 & sleep 4242; echo never", { timeout: 700 });
    expect(timedOut.last).toMatchObject({ type: "error", error: { ename: "CommandTimeout" } });
    expect(timedOut.stdout).toBe("");
    await expect.poll(async () => (await execd.run(countProcesses("sleep 4242"))).stdout.trim()).toBe("0");

    const events = await execd.events("/command", {
      command: "sleep 4343 & echo started; sleep 4343",
      background: true,
    });
    const id = String(events[0]?.text);
    expect(events.map((event) => event.type)).toEqual(["init"]);
    await expect.poll(async () => (await execd.fetch(`/command/${id}/logs`)).text()).toBe("started\n");
    expect(await execd.json(`/command/status/${id}`)).toMatchObject({ id, running: true, exit_code: null });
    expect((await execd.fetch(`/command?id=${id}`, { method: "DELETE" })).status).toBe(200);
    await expect.poll(async () => (await execd.json(`/command/status/${id}`)).running).toBe(false);
    expect((await execd.run(countProcesses("sleep 4343"))).stdout.trim()).toBe("0");
  });

  test("a client that goes away takes its foreground command with it", async () => {
    const controller = new AbortController();
    const response = await execd.fetch("/command", {
      method: "POST",
      body: JSON.stringify({ command: "sleep 4444" }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    controller.abort();
    await expect
      .poll(async () => (await execd.run(countProcesses("sleep 4444"))).stdout.trim(), { timeout: 10_000 })
      .toBe("0");
  });

  test("commands cut off the moment they start leave nothing running", async () => {
    // The kill can land while the shell is forking the command; nothing may outlive it.
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        const controller = new AbortController();
        await execd.fetch("/command", {
          method: "POST",
          body: JSON.stringify({ command: "sleep 4545" }),
          signal: controller.signal,
        });
        controller.abort();
      }),
    );
    await expect
      .poll(async () => (await execd.run(countProcesses("sleep 4545"))).stdout.trim(), { timeout: 10_000 })
      .toBe("0");
  });

  test("background logs can be read incrementally with a cursor", async () => {
    const events = await execd.events("/command", {
      command: "for i in 1 2 3; do echo line$i; done",
      background: true,
    });
    const id = String(events[0]?.text);
    await expect.poll(async () => (await execd.json(`/command/status/${id}`)).running).toBe(false);
    const all = await execd.fetch(`/command/${id}/logs`);
    expect(await all.text()).toBe("line1\nline2\nline3\n");
    expect(all.headers.get("EXECD-COMMANDS-TAIL-CURSOR")).toBe("3");
    expect(await (await execd.fetch(`/command/${id}/logs?cursor=2`)).text()).toBe("line3\n");
    expect((await execd.fetch("/command/status/nope")).status).toBe(404);
    expect((await execd.fetch(`/command/${id}/logs?cursor=-1`)).status).toBe(400);
  });

  test("bash sessions keep cwd, exports and functions between runs", async () => {
    const { session_id: id } = await execd.json("/session", {
      method: "POST",
      body: JSON.stringify({ cwd: "/tmp" }),
    });
    const first = await execd.events(`/session/${id}/run`, {
      command: "cd /var; export KEPT=yes; greet() { echo hello $1; }; false",
    });
    expect(first.at(-1)).toMatchObject({ type: "error", exit_code: 1 });
    const second = await execd.events(`/session/${id}/run`, { command: "pwd; echo $KEPT; greet you" });
    const stdout = second.filter((event) => event.type === "stdout").map((event) => event.text);
    expect(stdout).toEqual(["/var", "yes", "hello you"]);
    expect(second.at(-1)).toMatchObject({ type: "execution_complete", exit_code: 0 });
    expect((await execd.fetch(`/session/${id}`, { method: "DELETE" })).status).toBe(200);
    expect(
      (await execd.fetch(`/session/${id}/run`, { method: "POST", body: '{"command":"true"}' })).status,
    ).toBe(404);
  });

  test("isolated sessions are available", async () => {
    // The full behaviour, feature by feature under each runtime, is in isolated.test.ts.
    expect(await execd.json("/v1/isolated/capabilities")).toMatchObject({ available: true });
  });

  test("bad input is a 4xx with a code", async () => {
    const cases: Array<[string, string, string | undefined, number]> = [
      ["POST", "/command", "{oops", 400],
      ["POST", "/command", "{}", 400],
      ["POST", "/command", '{"command":"true","timeout":"soon"}', 400],
      ["POST", "/command", '{"command":"true","gid":5}', 400],
      ["POST", "/command", '{"command":"true","cwd":"/does/not/exist"}', 400],
      ["DELETE", "/command", undefined, 400],
      ["DELETE", "/command?id=nope", undefined, 404],
      ["GET", "/nowhere", undefined, 404],
      ["PUT", "/command", "{}", 405],
      ["POST", "/session/nope/run", '{"command":"true"}', 404],
      ["POST", "/v1/isolated/session", '{"workspace":{}}', 400],
    ];
    for (const [method, path, body, status] of cases) {
      const response = await execd.fetch(path, { method, ...(body === undefined ? {} : { body }) });
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(typeof ((await response.json()) as { code: unknown }).code).toBe("string");
    }
  });

  test("100 MB of output streams through with execd's memory bounded", async () => {
    const big = await execd.fetch("/command", {
      method: "POST",
      body: JSON.stringify({ command: "head -c 100000000 /dev/zero | tr '\\0' 'a'" }),
    });
    let received = 0;
    for await (const chunk of big.body as unknown as AsyncIterable<Uint8Array>) received += chunk.length;
    expect(received).toBeGreaterThan(100_000_000);
    const rss = await execd.rssKib();
    expect(rss).toBeGreaterThan(10 * 1024); // a real Node process, not the probe itself
    expect(rss).toBeLessThan(200 * 1024);
  });

  test("50 commands at once all answer", async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => execd.run(`echo ${i}`)));
    expect(results.map((result) => result.stdout)).toEqual(Array.from({ length: 50 }, (_, i) => `${i}\n`));
  });

  test("a fork bomb is stopped and execd keeps answering", async () => {
    const bomb = await execd.run("bomb() { bomb | bomb & }; bomb; sleep 30", { timeout: 3000 });
    expect(bomb.last).toMatchObject({ type: "error", error: { ename: "CommandTimeout" } });
    expect((await execd.fetch("/ping")).status).toBe(200);
    if (secure === "runc") {
      // The timeout took the whole process group, bomb included. (Under gVisor the process limit
      // stops the bomb and the sandbox survives, but some of its processes outlive the group kill.)
      await expect
        .poll(async () => (await execd.run(countProcesses("bomb"))).stdout.trim(), { timeout: 20_000 })
        .toBe("0");
    }
  });
});
