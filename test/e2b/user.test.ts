/**
 * E2B's default sandbox is a non-root user's machine: through E2B's stock `e2b` SDK, from the npm
 * registry and unmodified, a sandbox created with no template (the SDK's `base`) runs commands,
 * terminals, file calls and watches as `user` (uid 1000) in /home/user, with umask 022 and
 * passwordless sudo; `{ user: "root" }` reaches root. So does the code interpreter's
 * (`@e2b/code-interpreter`'s default, `code-interpreter-v1`). Under gVisor and runc.
 */
import { readFileSync } from "node:fs";
import { Sandbox as CodeInterpreter } from "@e2b/code-interpreter";
import { CommandExitError, type FilesystemEvent, FilesystemEventType, Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

/** A terminal's output as text, and a way to wait for something to show in it. */
class Screen {
  text = "";
  private readonly decoder = new TextDecoder();
  readonly onData = (data: Uint8Array) => {
    this.text += this.decoder.decode(data, { stream: true });
  };

  async until(pattern: RegExp): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!pattern.test(this.text)) {
      if (Date.now() > deadline)
        throw new Error(`${pattern} never showed; output: ${JSON.stringify(this.text)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

// A template's build sees only its own directory, so each E2B-shaped template has a copy.
test("the two E2B-shaped templates carry the same sudo", () => {
  for (const file of ["sudo", "serve", "run"])
    expect(readFileSync(`templates/e2b-code-interpreter/${file}`, "utf8"), file).toBe(
      readFileSync(`templates/e2b-base/${file}`, "utf8"),
    );
});

describe.each(["gvisor", "runc"] as const)("the stock e2b SDK: E2B's base sandbox under %s", (runtime) => {
  let server: E2bServer;
  let sandbox: Sandbox;
  let interpreter: CodeInterpreter;
  const run = async (command: string, opts: { user?: string } = {}) =>
    (await sandbox.commands.run(command, opts)).stdout;

  beforeAll(async () => {
    server = await startE2bServer({
      config: { secure_runtime: { type: runtime === "runc" ? "" : "gvisor" } },
    });
    Object.assign(process.env, server.env);
    [sandbox, interpreter] = await Promise.all([
      Sandbox.create({ timeoutMs: 600_000 }),
      CodeInterpreter.create({ timeoutMs: 600_000 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([sandbox?.kill(), interpreter?.kill()].map((kill) => kill?.catch(() => undefined)));
    await server?.dispose();
  });

  test("it is E2B's base, on the runtime asked for", async () => {
    expect((await sandbox.getInfo()).templateId).toBe("e2b-base");
    const kernel = await run("dmesg 2>/dev/null | head -n 1; true");
    expect(kernel.includes("gVisor")).toBe(runtime === "gvisor");
  });

  test("commands run as user (uid 1000) in /home/user, with umask 0022", async () => {
    expect(await run('whoami; id -u; id -g; pwd; echo "$HOME $USER"; umask')).toBe(
      "user\n1000\n1000\n/home/user\n/home/user user\n0022\n",
    );
    // Really uid 1000, not root under another name: root's home is closed to it.
    const denied = await sandbox.commands.run("touch /root/not-yours").catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(CommandExitError);
    expect((denied as CommandExitError).stderr).toContain("Permission denied");
  });

  test("sudo: passwordless, to root or another user, on the caller's input and output", async () => {
    expect((await sandbox.commands.run("sudo -n true")).exitCode).toBe(0);
    expect(await run("sudo whoami; sudo id -u; sudo -u user whoami; sudo sh -c 'echo $HOME; pwd'")).toBe(
      "root\n0\nuser\n/root\n/home/user\n",
    );
    expect(await run("echo written | sudo tee /etc/by-sudo >/dev/null; stat -c '%U %a' /etc/by-sudo")).toBe(
      "root 644\n",
    );
    const failed = await sandbox.commands.run("sudo sh -c 'exit 7'").catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(CommandExitError);
    expect((failed as CommandExitError).exitCode).toBe(7);
  });

  test("a sudo command ends, with what it started, when its caller is killed (commands.kill)", async () => {
    const count = () => run("pgrep -c -f '^sleep 30[12]$' || true");
    const handle = await sandbox.commands.run("sudo sh -c 'sleep 301 & sleep 302'", { background: true });
    await expect.poll(count, { timeout: 20_000 }).toBe("2\n");
    expect(await handle.kill()).toBe(true);
    await expect.poll(count, { timeout: 20_000 }).toBe("0\n");
  });

  test('{ user: "root" } runs as root in /root', async () => {
    expect(await run('whoami; id -u; pwd; echo "$HOME"', { user: "root" })).toBe("root\n0\n/root\n/root\n");
  });

  test("files: written by default as user in /home/user, as root when asked", async () => {
    const written = await sandbox.files.write("notes.txt", "mine\n");
    expect(written).toMatchObject({ path: "/home/user/notes.txt", name: "notes.txt" });
    expect(await sandbox.files.getInfo("notes.txt")).toMatchObject({ owner: "user", group: "user" });
    expect(await run("cat ~/notes.txt; stat -c '%U %G %a' notes.txt")).toBe("mine\nuser user 644\n");
    await sandbox.files.makeDir("made/deeper");
    expect(await run("stat -c '%U %n' made made/deeper")).toBe("user made\nuser made/deeper\n");

    const byRoot = await sandbox.files.write("root-notes.txt", "root's\n", { user: "root" });
    expect(byRoot.path).toBe("/root/root-notes.txt");
    await sandbox.files.write("/home/user/from-root.txt", "root's\n", { user: "root" });
    expect(await run("stat -c '%U %G' from-root.txt; sudo stat -c %U /root/root-notes.txt")).toBe(
      "root root\nroot\n",
    );
    const listed = await sandbox.files.list(".");
    expect(listed.find((entry) => entry.name === "notes.txt")).toMatchObject({ owner: "user" });
    expect(listed.find((entry) => entry.name === "from-root.txt")).toMatchObject({ owner: "root" });
    expect(await sandbox.files.read("root-notes.txt", { user: "root" })).toBe("root's\n");
  });

  test("pty: a terminal is user's in /home/user, root's when asked", async () => {
    const encoder = new TextEncoder();
    for (const [user, expected] of [
      [undefined, /user\r\n1000\r\n\/home\/user\r\n/],
      ["root", /root\r\n0\r\n\/root\r\n/],
    ] as const) {
      const screen = new Screen();
      const terminal = await sandbox.pty.create({
        cols: 80,
        rows: 24,
        onData: screen.onData,
        ...(user ? { user } : {}),
      });
      await sandbox.pty.sendInput(terminal.pid, encoder.encode("whoami; id -u; pwd; exit\n"));
      await screen.until(expected);
      await terminal.wait();
    }
  });

  test("watchDir: a relative path is the watching user's home's", async () => {
    const names = (events: FilesystemEvent[]) =>
      events.filter((event) => event.type === FilesystemEventType.CREATE).map((event) => event.name);
    const usersEvents: FilesystemEvent[] = [];
    const rootsEvents: FilesystemEvent[] = [];
    await sandbox.files.makeDir("watched");
    await sandbox.files.makeDir("watched", { user: "root" });
    const users = await sandbox.files.watchDir("watched", (event) => void usersEvents.push(event));
    const roots = await sandbox.files.watchDir("watched", (event) => void rootsEvents.push(event), {
      user: "root",
    });
    try {
      await run("echo a > /home/user/watched/a.txt && sudo sh -c 'echo b > /root/watched/b.txt'");
      await expect.poll(() => names(usersEvents)).toEqual(["a.txt"]);
      await expect.poll(() => names(rootsEvents)).toEqual(["b.txt"]);
    } finally {
      await users.stop();
      await roots.stop();
    }
  });

  test("python3, git and tput are there", async () => {
    const tools = await run("python3 -c 'print(6*7)'; git --version; TERM=xterm-256color tput colors");
    expect(tools).toMatch(/^42\ngit version \d[^\n]*\n256\n$/);
  });

  test("the code interpreter's sandbox is user's too; its contexts start in /home/user, as root", async () => {
    expect((await interpreter.getInfo()).templateId).toBe("e2b-code-interpreter");
    expect((await interpreter.commands.run("whoami; pwd; umask; sudo -n whoami")).stdout).toBe(
      "user\n/home/user\n0022\nroot\n",
    );
    expect((await interpreter.files.write("data.csv", "a,b\n1,2\n")).path).toBe("/home/user/data.csv");
    // E2B's interpreter runs its kernels as root (its Jupyter server is started with sudo), in
    // /home/user: a notebook reads the files the sandbox's user wrote where they are.
    const cell = await interpreter.runCode(
      "import os, getpass\n(getpass.getuser(), os.getcwd(), open('data.csv').read())",
    );
    expect(cell.text).toBe("('root', '/home/user', 'a,b\\n1,2\\n')");
    const context = await interpreter.createCodeContext();
    expect(context.cwd).toBe("/home/user");
  });
});
