import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, paddockBin, password, TmuxPane } from "./user-cli.js";

/** The README's shell example for the command line, as written. */
function readmeShellExample(): string {
  const readme = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### From a shell"));
  const example = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!example) throw new Error("README.md's 'From a shell' has no ```sh example");
  return example;
}

describe("the README's command-line example, typed into a terminal", () => {
  let t: TestServer;
  let user: CliUser;
  let pane: TmuxPane | undefined;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
  });
  afterAll(async () => {
    pane?.close();
    await t?.dispose();
  });

  test("runs line by line in bash, answering the password prompt and using the shell", async () => {
    // `paddock` on PATH, as an installed command is; the example's own files in a directory.
    const bin = join(user.home, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "paddock"), `#!/bin/sh\nexec ${process.execPath} ${paddockBin} "$@"\n`);
    chmodSync(join(bin, "paddock"), 0o755);
    writeFileSync(join(user.home, "data.csv"), "a,b\n1,2\n");
    writeFileSync(join(user.home, "example.sh"), `set -e\n${readmeShellExample()}echo README-EXIT=$?\n`);
    const terminal = new TmuxPane(
      `cd ${user.home} && ${user.shellEnvironment({ PATH: `${bin}:${process.env.PATH}` })} bash example.sh; echo STATUS=$?; sleep 120`,
      { cols: 160, rows: 50 },
    );
    pane = terminal;

    await terminal.waitFor(/password/i, 30_000);
    terminal.type(password);
    await terminal.waitFor(/Signed up and logged in as me@example\.com/, 30_000);
    await terminal.waitFor(/^42$/m, 30_000);
    await terminal.waitFor(/[#$] $/m, 30_000); // the shell in the sandbox
    terminal.type("ls /tmp/data.csv && echo in-the-sand''box");
    await terminal.waitFor(/^in-the-sandbox$/m, 30_000);
    terminal.type("exit");
    await terminal.waitFor(/^STATUS=\d+$/m, 30_000);
    expect(terminal.screen()).toMatch(/^README-EXIT=0$/m);
    expect(terminal.screen()).toMatch(/^STATUS=0$/m);
    expect(terminal.screen()).not.toContain(password);
    expect(await user.json(["sandbox", "list"])).toEqual([]);
  });
});
