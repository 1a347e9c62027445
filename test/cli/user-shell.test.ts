import { execFileSync } from "node:child_process";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine, paddockBin } from "./user-cli.js";

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
let panes = 0;

/** A real terminal (a tmux pane, 100 × 30) running `paddock <args>`, then its exit status and `stty -a`. */
class Terminal {
  readonly name = `paddock-shell-${process.pid}-${++panes}`;

  constructor(user: CliUser, args: string[]) {
    const environment = Object.entries(user.environment())
      .map(([name, value]) => `${name}=${value}`)
      .join(" ");
    const command = `env ${environment} ${process.execPath} ${paddockBin} ${args.join(" ")}; echo EXIT=$?; stty -a; sleep 120`;
    tmux("new-session", "-d", "-s", this.name, "-x", "100", "-y", "30", command);
  }

  screen(): string {
    return tmux("capture-pane", "-p", "-J", "-t", this.name);
  }

  async waitFor(pattern: RegExp): Promise<string> {
    await expect.poll(() => this.screen(), { timeout: 20_000, interval: 50 }).toMatch(pattern);
    return this.screen();
  }

  type(line: string): void {
    tmux("send-keys", "-t", this.name, "-l", line);
    tmux("send-keys", "-t", this.name, "Enter");
  }

  resize(cols: number, rows: number): void {
    tmux("resize-window", "-t", this.name, "-x", String(cols), "-y", String(rows));
  }

  close(): void {
    tmux("kill-session", "-t", this.name);
  }
}

/** After paddock exits, `stty -a` shows the terminal back in cooked mode with echo on. */
function restored(screen: string): boolean {
  const settings = screen.slice(screen.indexOf("EXIT="));
  return /(^|\s)icanon(\s|$)/m.test(settings) && /(^|\s)echo(\s|$)/m.test(settings);
}

describe("paddock shell", () => {
  let t: TestServer;
  let user: CliUser;
  let sandboxId: string;
  const open: Terminal[] = [];
  const terminal = (...args: string[]) => {
    const opened = new Terminal(user, args);
    open.push(opened);
    return opened;
  };

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("shell");
    sandboxId = (await user.json<{ id: string }>(["sandbox", "create", "--timeout", "600"])).id;
  });
  afterEach(() => {
    for (const opened of open.splice(0)) opened.close();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("a login shell the size of the terminal, resized with it, exiting with the shell's code", async () => {
    const shell = terminal("shell", sandboxId);
    await shell.waitFor(/[#$] $/m);
    shell.type("stty size");
    await shell.waitFor(/^30 100$/m);
    shell.resize(120, 40);
    shell.type("stty size");
    await shell.waitFor(/^40 120$/m);
    shell.type("exit 7");
    const screen = await shell.waitFor(/^EXIT=7$/m);
    expect(restored(screen)).toBe(true);
  });

  test("--command runs a program on the terminal instead of a shell", async () => {
    const program = terminal("shell", sandboxId, "--command", "'tty; exit 5'");
    const screen = await program.waitFor(/^EXIT=5$/m);
    expect(screen).toMatch(/^\/dev\/pts\/\d+$/m);
    expect(restored(screen)).toBe(true);
  });

  test("an unknown sandbox and a sandbox killed under the shell: one line with the code, the terminal restored", async () => {
    const unknown = await terminal("shell", "sbx-unknown").waitFor(/^EXIT=1$/m);
    expect(unknown).toMatch(/^paddock: .* \(sandbox_not_found\)$/m);
    expect(restored(unknown)).toBe(true);

    const doomed = (await user.json<{ id: string }>(["sandbox", "create"])).id;
    const shell = terminal("shell", doomed);
    await shell.waitFor(/[#$] $/m);
    expect((await user.run(["sandbox", "kill", doomed])).status).toBe(0);
    const screen = await shell.waitFor(/^EXIT=1$/m);
    expect(screen).toMatch(/^paddock: \S.* \([a-z_]+\)$/m);
    expect(restored(screen)).toBe(true);
  });

  test("without a terminal on stdin it refuses with a usage error", async () => {
    const piped = await user.run(["shell", sandboxId], { input: "echo hi\n" });
    expect(piped.status).toBe(2);
    expect(piped.stderr).toMatch(errorLine("usage"));
    expect(piped.stderr).toContain("paddock exec");
  });
});
