import { EXECD_ENV_PATH } from "@paddock/common/contracts";
import { describe, expect, test } from "vitest";
import { countProcesses, type ExecdClient, sandboxPerSuite } from "./client.js";

/** Creates a Python context and returns its id. */
async function openContext(execd: ExecdClient): Promise<string> {
  const response = await execd.fetch("/code/context", {
    method: "POST",
    body: JSON.stringify({ language: "python" }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

/** Runs a cell and sorts its events. */
async function runCell(execd: ExecdClient, id: string, code: string) {
  const events = await execd.events("/code", { context: { id }, code });
  const text = (type: string) =>
    events
      .filter((event) => event.type === type)
      .map((event) => event.text)
      .join("");
  return {
    events,
    stdout: text("stdout"),
    stderr: text("stderr"),
    count: events.find((event) => event.type === "execution_count")?.execution_count,
    last: events.at(-1),
    results: events
      .filter((event) => event.type === "result")
      .map((event) => event.results as Record<string, unknown>),
    error: events.find((event) => event.type === "error")?.error as
      | { ename: string; evalue: string; traceback: string[] }
      | undefined,
  };
}

/**
 * Interrupts a cell that started a child process and loops; answers the child's exit status
 * afterwards (None while it runs, -2 when SIGINT reached it too).
 */
async function interruptWithChild(execd: ExecdClient, id: string): Promise<string> {
  const running = runCell(
    execd,
    id,
    "import subprocess, time\nchild = subprocess.Popen(['sleep', '300'])\nwhile True:\n    time.sleep(0.05)",
  );
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const interrupt = await execd.fetch(`/code?id=${id}`, { method: "DELETE" });
  expect(await interrupt.json()).toEqual({ id, interrupted: true });
  expect((await running).error).toMatchObject({ ename: "KeyboardInterrupt" });
  const status = await runCell(execd, id, "time.sleep(0.2)\nchild.poll()");
  return String(status.results[0]?.["text/plain"] ?? "None");
}

/** Python contexts in the code-interpreter template (python3-ipykernel) run on a real kernel. */
describe.each(["gvisor", "runc"] as const)("the IPython kernel under %s", (secure) => {
  let execd: ExecdClient;
  sandboxPerSuite(
    secure,
    {
      image: { uri: "paddock/template-code-interpreter:latest" },
      resourceLimits: { memory: "2Gi" },
    },
    (made) => {
      execd = made;
    },
  );

  const context = () => openContext(execd);
  const run = (id: string, code: string) => runCell(execd, id, code);
  const kernels = async () => Number((await execd.run(countProcesses("ipykernel_launcher"))).stdout.trim());

  test("cells run on ipykernel: state, execution_count, streams and the last expression", async () => {
    const id = await context();
    const first = await run(id, "import sys\nx = 40\nprint('out')\nprint('err', file=sys.stderr)");
    expect(first.events[0]).toMatchObject({ type: "init", text: id });
    expect(first.count).toBe(1);
    expect(first.stdout).toBe("out\n");
    expect(first.stderr).toBe("err\n");
    expect(first.last).toMatchObject({ type: "execution_complete" });
    expect(first.last?.execution_time).toEqual(expect.any(Number));
    const second = await run(id, "x + 2");
    expect(second.count).toBe(2);
    expect(second.results).toEqual([{ "text/plain": "42" }]);
    // The kernel, not the built-in driver, ran it.
    const kernel = await run(id, "type(get_ipython()).__name__");
    expect(kernel.results[0]?.["text/plain"]).toBe("'ZMQInteractiveShell'");
    expect(kernel.count).toBe(3);
  });

  test("two contexts are two kernels and never share state", async () => {
    const [a, b] = await Promise.all([context(), context()]);
    await run(a as string, "secret = 'a'");
    const other = await run(b as string, "secret");
    expect(other.error).toMatchObject({ ename: "NameError" });
    expect(other.count).toBe(1);
    expect((await run(a as string, "secret")).results[0]).toMatchObject({ "text/plain": "'a'" });
  });

  test("matplotlib figures come back as image/png, pandas frames as HTML, dicts as JSON", async () => {
    const id = await context();
    const plot = await run(
      id,
      "import matplotlib.pyplot as plt\nimport numpy as np\nplt.plot(np.arange(10) ** 2)\nplt.title('squares')",
    );
    const image = plot.results.find((results) => results["image/png"]);
    const png = Buffer.from(String(image?.["image/png"] ?? ""), "base64");
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    expect(png.length).toBeGreaterThan(1000);
    const frame = await run(id, "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})");
    expect(String(frame.results[0]?.["text/html"])).toContain("<table");
    expect(String(frame.results[0]?.["text/plain"])).toContain("a");
    const json = await run(
      id,
      "from IPython.display import JSON, HTML, display\ndisplay(HTML('<b>hi</b>'))\nJSON({'a': [1, 2]})",
    );
    expect(json.results[0]).toMatchObject({ "text/html": "<b>hi</b>" });
    expect(json.results[1]).toMatchObject({ "application/json": { a: [1, 2] } });
  });

  test("an exception ends the cell with its traceback in plain text", async () => {
    const id = await context();
    const failed = await run(id, "def divide(a):\n    return a / 0\n\ndivide(1)");
    expect(failed.last).toMatchObject({ type: "error" });
    expect(failed.error).toMatchObject({ ename: "ZeroDivisionError", evalue: "division by zero" });
    const traceback = failed.error?.traceback.join("\n") ?? "";
    expect(traceback).toContain("divide");
    expect(traceback).toContain("ZeroDivisionError");
    expect(traceback).not.toContain("\u001b[");
    expect(failed.events.some((event) => event.type === "execution_complete")).toBe(false);
    // The context goes on.
    expect((await run(id, "1 + 1")).results[0]).toMatchObject({ "text/plain": "2" });
  });

  test("DELETE /code interrupts an endless loop and keeps the context's variables", async () => {
    const id = await context();
    await run(id, "kept = 'still here'");
    const running = run(id, "import time\nwhile True:\n    time.sleep(0.05)");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // A second cell on a busy context is refused and changes nothing.
    const busy = await execd.fetch("/code", {
      method: "POST",
      body: JSON.stringify({ context: { id }, code: "kept = 0" }),
    });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { code: string }).code).toBe("context_busy");
    const interrupt = await execd.fetch(`/code?id=${id}`, { method: "DELETE" });
    expect(await interrupt.json()).toEqual({ id, interrupted: true });
    const interrupted = await running;
    expect(interrupted.error).toMatchObject({ ename: "KeyboardInterrupt" });
    const after = await run(id, "kept");
    expect(after.results[0]).toMatchObject({ "text/plain": "'still here'" });
    expect(after.count).toBe(3);
  });

  test("a signal-mode interrupt reaches the cell's child processes too; input() fails instead of hanging", async () => {
    const id = await context();
    expect(await interruptWithChild(execd, id)).toBe("-2");
    const asked = await run(id, "input('name? ')");
    expect(asked.error).toMatchObject({ ename: "StdinNotImplementedError" });
  });

  test("a kernel that dies mid-cell fails that cell; the next run starts a new kernel", async () => {
    const id = await context();
    await run(id, "lost = 1");
    const died = await run(id, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)");
    expect(died.error).toMatchObject({ ename: "ContextDied" });
    expect(died.error?.evalue).toContain("SIGKILL");
    const fresh = await run(id, "'lost' in dir()");
    expect(fresh.results[0]).toMatchObject({ "text/plain": "False" });
    expect(fresh.count).toBe(1);
  });

  test("a kernel that dies between cells is reported by the next run, which then restarts it", async () => {
    const id = await context();
    await run(id, "import os\nopen('/tmp/kernel.pid', 'w').write(str(os.getpid()))");
    expect((await execd.run("kill -9 $(cat /tmp/kernel.pid)")).exitCode).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const reported = await run(id, "print('not run')");
    expect(reported.error).toMatchObject({ ename: "ContextDied" });
    expect(reported.stdout).toBe("");
    const next = await run(id, "print('runs')");
    expect(next.stdout).toBe("runs\n");
    expect(next.last).toMatchObject({ type: "execution_complete" });
  });

  test("deleting a context shuts its kernel down", async () => {
    const id = await context();
    const before = await kernels();
    expect((await execd.fetch(`/code/contexts/${id}`, { method: "DELETE" })).status).toBe(200);
    for (let i = 0; i < 50 && (await kernels()) !== before - 1; i++)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await kernels()).toBe(before - 1);
    expect((await execd.fetch(`/code/contexts/${id}`)).status).toBe(404);
    const gone = await execd.fetch("/code", {
      method: "POST",
      body: JSON.stringify({ context: { id }, code: "1" }),
    });
    expect(gone.status).toBe(404);
  });

  test("deleting a context in the middle of a cell ends that cell with an error", async () => {
    const id = await context();
    const running = run(id, "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.05)");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await execd.fetch(`/code/contexts/${id}`, { method: "DELETE" })).status).toBe(200);
    const ended = await running;
    expect(ended.stdout).toBe("started\n");
    expect(ended.error).toMatchObject({ ename: "ContextDied" });
  });

  test("a run without a context id is stateless: its kernel is gone when the run ends", async () => {
    const before = await kernels();
    const listed = async () =>
      ((await execd.json("/code/contexts?language=python")) as { id: string }[]).length;
    const contextsBefore = await listed();
    const stateless = async (code: string) => {
      const events = await execd.events("/code", { context: { language: "python" }, code });
      return events.find((event) => event.type === "result")?.results as Record<string, string> | undefined;
    };
    expect((await stateless("leftover = 1\ntype(get_ipython()).__name__"))?.["text/plain"]).toBe(
      "'ZMQInteractiveShell'",
    );
    expect((await stateless("'leftover' in dir()"))?.["text/plain"]).toBe("False");
    expect(await listed()).toBe(contextsBefore);
    for (let i = 0; i < 50 && (await kernels()) !== before; i++)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await kernels()).toBe(before);
  });

  // Last: it changes the sandbox's environment for every later context.
  test("a kernel that cannot start leaves the context on the built-in driver", async () => {
    await execd.run("mkdir -p /tmp/broken && echo 'raise SystemExit(3)' > /tmp/broken/ipykernel_launcher.py");
    const set = await execd.fetch(EXECD_ENV_PATH, {
      method: "POST",
      body: JSON.stringify({ PYTHONPATH: "/tmp/broken" }),
    });
    expect(set.status).toBe(200);
    const id = await context();
    const probe = await run(id, "x = 1\n('get_ipython' in dir(__builtins__), x + 1)");
    expect(probe.results[0]).toMatchObject({ "text/plain": "(False, 2)" });
    expect(probe.last).toMatchObject({ type: "execution_complete" });
  });
});

/** A kernelspec with `interrupt_mode: message` is interrupted over the control channel. */
describe("a kernel interrupted by message", () => {
  let execd: ExecdClient;
  sandboxPerSuite(
    "runc",
    {
      image: { uri: "paddock/template-code-interpreter:latest" },
      resourceLimits: { memory: "2Gi" },
    },
    (made) => {
      execd = made;
    },
  );

  test("interrupt_request on control stops the cell and keeps the context", async () => {
    // Before the first Python context: execd reads the kernelspec once.
    const spec = JSON.stringify({
      argv: ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
      display_name: "Python 3",
      language: "python",
      interrupt_mode: "message",
    });
    const written = await execd.run(
      `mkdir -p /usr/local/share/jupyter/kernels/python3 && echo '${spec}' > /usr/local/share/jupyter/kernels/python3/kernel.json`,
    );
    expect(written.exitCode).toBe(0);
    const id = await openContext(execd);
    await runCell(execd, id, "kept = 7");
    // ipykernel passes the interrupt on to its process group itself.
    expect(await interruptWithChild(execd, id)).toBe("-2");
    expect((await runCell(execd, id, "kept")).results[0]).toMatchObject({ "text/plain": "7" });
  });
});
