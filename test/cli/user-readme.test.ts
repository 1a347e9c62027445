import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, paddockBin, password } from "./user-cli.js";

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });

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
  const session = `paddock-readme-${process.pid}`;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
  });
  afterAll(async () => {
    try {
      tmux("kill-session", "-t", session);
    } catch {
      // Already gone.
    }
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
    const environment = Object.entries(user.environment({ PATH: `${bin}:${process.env.PATH}` }))
      .map(([name, value]) => `${name}=${value}`)
      .join(" ");
    tmux(
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      "160",
      "-y",
      "50",
      `cd ${user.home} && env ${environment} bash example.sh; echo STATUS=$?; sleep 120`,
    );
    const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", session);
    const waitFor = (pattern: RegExp) =>
      expect.poll(screen, { timeout: 30_000, interval: 50 }).toMatch(pattern);
    const type = (text: string) => {
      tmux("send-keys", "-t", session, "-l", text);
      tmux("send-keys", "-t", session, "Enter");
    };

    await waitFor(/password/i);
    type(password);
    await waitFor(/Signed up and logged in as me@example\.com/);
    await waitFor(/^42$/m);
    await waitFor(/[#$] $/m); // the shell in the sandbox
    type("ls /tmp/data.csv && echo in-the-sand''box");
    await waitFor(/^in-the-sandbox$/m);
    type("exit");
    await waitFor(/^STATUS=\d+$/m);
    expect(screen()).toMatch(/^README-EXIT=0$/m);
    expect(screen()).toMatch(/^STATUS=0$/m);
    expect(screen()).not.toContain(password);
    expect(await user.json(["sandbox", "list"])).toEqual([]);
  });
});
