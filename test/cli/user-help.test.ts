import { describe, expect, test } from "vitest";
import { CliUser, errorLine } from "./user-cli.js";

// Every command the CLI has; a group's help must list exactly these (so a new command joins here),
// besides commander's own `help [command]`.
const groups: Record<string, string[]> = {
  "": [
    "signup",
    "login",
    "logout",
    "keys",
    "audit",
    "sandbox",
    "exec",
    "shell",
    "cp",
    "templates",
    "template",
    "volumes",
    "secrets",
    "memory",
    "usage",
    "mcp",
    "serve",
    "runtime",
  ],
  keys: ["list", "create", "delete", "rotate"],
  audit: ["export"],
  sandbox: ["create", "list", "get", "kill", "pause", "resume", "renew"],
  templates: ["list", "build", "publish", "unpublish"],
  template: ["build", "list", "show", "logs", "cancel", "delete"],
  volumes: ["create", "list", "delete"],
  secrets: ["list", "set", "delete"],
  memory: ["add", "list", "search", "delete"],
  runtime: ["serve"],
};

/** The subcommands a help text lists: the first word of each indented line under a heading that is not "Options:". */
function listedCommands(help: string): string[] {
  const names: string[] = [];
  let inCommands = false;
  for (const line of help.split("\n")) {
    if (/^\S.*:$/.test(line)) inCommands = !/Options:$/.test(line) && line !== "Examples:";
    else if (inCommands && /^ {2}\S/.test(line)) names.push(line.trim().split(/\s/)[0] as string);
  }
  return names.filter((name) => name !== "help");
}

describe("paddock --help and usage errors", () => {
  const user = new CliUser("http://127.0.0.1:9");

  test("every command and group answers --help with its usage, exit status 0", async () => {
    const paths = Object.entries(groups).flatMap(([group, names]) => [
      ...(group ? [[group]] : []),
      ...names.filter((name) => !(name in groups)).map((name) => (group ? [group, name] : [name])),
    ]);
    const helps = await Promise.all(paths.map((path) => user.run([...path, "--help"])));
    paths.forEach((path, index) => {
      const help = helps[index];
      expect([path, help?.status, help?.stderr]).toEqual([path, 0, ""]);
      expect(help?.stdout).toContain(`Usage: paddock ${path.join(" ")}`);
      // The options every command takes are shown everywhere.
      expect(help?.stdout).toContain("--base-url <url>");
    });
    for (const [group, names] of Object.entries(groups)) {
      const help = await user.run([...(group ? [group] : []), "--help"]);
      expect([group, listedCommands(help.stdout)]).toEqual([group, names]);
    }
  });

  test("usage errors: one line, exit status 2", async () => {
    for (const args of [
      ["sandbox", "get"],
      ["sandbox", "create", "--timeout", "soon"],
      ["sandbox", "create", "--env", "NOEQUALS"],
      ["exec", "sbx-x"],
      ["keys", "list", "--unknown"],
      ["template", "build", "."],
    ]) {
      const result = await user.run(args);
      expect([args, result.status, result.stdout]).toEqual([args, 2, ""]);
      expect(result.stderr).toMatch(errorLine("usage"));
    }
    const help = await user.run(["sandbox", "list", "--help"]);
    expect(help.stdout).toContain("--json");
  });

  test("an unknown command prints the overview on stdout and a usage error", async () => {
    const result = await user.run(["launch"]);
    expect(result.status).toBe(2);
    expect(result.stdout).toContain("paddock runtime serve");
    expect(result.stderr).toMatch(errorLine("usage"));
    const bare = await user.run([]);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain("Usage: paddock");
  });
});
