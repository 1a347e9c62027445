import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine, paddockBin, TmuxPane } from "./user-cli.js";

/** A real terminal (100 × 30) running `paddock <args>`, then its exit status and `stty -a`. */
function paddockIn(user: CliUser, args: string[]): TmuxPane {
  return new TmuxPane(
    `${user.shellEnvironment()} ${process.execPath} ${paddockBin} ${args.join(" ")}; echo EXIT=$?; stty -a; sleep 120`,
  );
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
  const open: TmuxPane[] = [];
  const terminal = (...args: string[]) => {
    const opened = paddockIn(user, args);
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
