import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine, paddockBin, TmuxPane } from "./user-cli.js";

describe("paddock template: the account's own templates, built by the server", () => {
  let t: TestServer;
  let user: CliUser;
  const panes: TmuxPane[] = [];

  /** A build context in the user's home: path → content. */
  const context = (name: string, files: Record<string, string>) => {
    const root = join(user.home, name);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    return root;
  };
  /** `paddock ARGS…` in a terminal of its own, then its exit status on a line of its own. */
  const inTerminal = (args: string[]) => {
    const pane = new TmuxPane(
      `${user.shellEnvironment()} ${process.execPath} ${paddockBin} ${args.join(" ")}; echo STATUS=$?; sleep 120`,
      { cols: 120, rows: 40 },
    );
    panes.push(pane);
    return pane;
  };

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("templates");
  });
  afterAll(async () => {
    for (const pane of panes) pane.close();
    // Deleting the templates removes their images from the shared Docker engine.
    const listed = await user.run(["template", "list", "--json"]).catch(() => undefined);
    for (const template of JSON.parse(listed?.stdout || "[]") as Array<{ name: string }>)
      await user.run(["template", "delete", template.name]);
    await t?.dispose();
  });

  test("build prints the log and exits 0; list, show and logs find it; a sandbox starts from it; delete", async () => {
    const root = context("greeter", {
      Dockerfile: "FROM ubuntu\nCOPY greeting.txt /srv/\nRUN echo built > /srv/built.txt\n",
      "greeting.txt": "hello from the cli\n",
      ".dockerignore": "*.env\n",
      "secret.env": "never sent",
    });
    const built = await user.run(["template", "build", root, "--name", "greeter", "--description", "Greets"]);
    expect([built.status, built.stderr]).toEqual([0, ""]);
    // Not a terminal: the lines as they came, no bar, no escape sequences.
    expect(built.stdout).toMatch(/^step 1\/2 \(Dockerfile line 2\): COPY greeting\.txt \/srv\/$/m);
    expect(built.stdout).toMatch(/^step 2\/2 \(Dockerfile line 3\): RUN echo built > \/srv\/built\.txt$/m);
    expect(built.stdout).toMatch(
      /^Built template greeter \(build \S+, .*\); start it with: paddock sandbox create --template greeter$/m,
    );
    expect(built.stdout).not.toContain("\u001b");
    expect(built.stdout).not.toContain("█");

    const listed = await user.run(["template", "list"]);
    expect(listed.stdout).toMatch(/^NAME +CURRENT BUILD +RESOURCES +UPDATED +DESCRIPTION\n/);
    expect(listed.stdout).toMatch(/^greeter +bld-\S+ .* Greets$/m);
    const shown = await user.run(["template", "show", "greeter"]);
    expect(shown.stdout).toMatch(/^name: +greeter$/m);
    expect(shown.stdout).toMatch(/^bld-\S+ +ready /m);
    const logs = await user.run(["template", "logs", "greeter"]);
    expect(logs.stdout).toContain("step 2/2 (Dockerfile line 3): RUN echo built");
    expect(logs.stdout).toMatch(/^built .*, \d+ MB$/m);
    // `templates list` (every template the account can start from) has it too.
    expect((await user.run(["templates", "list"])).stdout).toMatch(/^greeter /m);

    const sandbox = await user.json<{ id: string }>(["sandbox", "create", "--template", "greeter"]);
    const cat = await user.run(["exec", sandbox.id, "--", "sh", "-c", "cat /srv/*.txt; ls /srv"]);
    expect(cat.stdout).toBe("built\nhello from the cli\nbuilt.txt\ngreeting.txt\n");
    const inUse = await user.run(["template", "delete", "greeter"]);
    expect(inUse.status).toBe(1);
    expect(inUse.stderr).toMatch(errorLine("template_in_use"));
    expect((await user.run(["sandbox", "kill", sandbox.id])).status).toBe(0);
    const deleted = await user.run(["template", "delete", "greeter"]);
    expect([deleted.status, deleted.stdout]).toEqual([0, "Deleted template greeter\n"]);
    const gone = await user.run(["template", "show", "greeter"]);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(errorLine("template_not_found"));
  });

  test("the operator publishes a template on the server's host: every account sees it, and takes it back", async () => {
    const root = context("shared", { Dockerfile: "FROM ubuntu\nRUN echo shared > /shared.txt\n" });
    expect((await user.run(["template", "build", root, "--name", "shared"])).status).toBe(0);
    const other = new CliUser(t.url);
    await other.signUp("templates-other");
    const visible = async () =>
      (JSON.parse((await other.run(["templates", "list", "--json"])).stdout) as Array<{ id: string }>).map(
        (template) => template.id,
      );
    expect(await visible()).not.toContain("shared");
    // The operator's command reads the server's own database, as its other host commands do.
    const operator = { PADDOCK_DATABASE_URL: t.config.database.url };
    const published = await user.run(["templates", "publish", "templates@example.com", "shared"], {
      env: operator,
    });
    expect([published.status, published.stdout]).toEqual([0, expect.stringContaining("published")]);
    expect(await visible()).toContain("shared");
    const unknown = await user.run(["templates", "publish", "nobody@example.com", "shared"], {
      env: operator,
    });
    expect([unknown.status, unknown.stderr]).toEqual([1, "paddock: no account nobody@example.com\n"]);
    expect(
      (await user.run(["templates", "unpublish", "templates@example.com", "shared"], { env: operator }))
        .status,
    ).toBe(0);
    expect(await visible()).not.toContain("shared");
  });

  test("a failing step exits 1 with the reason, naming the Dockerfile's line", async () => {
    const root = context("broken", { Dockerfile: "FROM ubuntu\nRUN echo fine\nRUN echo oops >&2; exit 4\n" });
    const failed = await user.run(["template", "build", root, "--name", "broken"]);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toMatch(/^oops$/m);
    expect(failed.stderr).toMatch(errorLine("template_build_failed"));
    expect(failed.stderr).toContain("step 2/2 (Dockerfile line 3)");
    // The log of that build, followed after the fact: the same reason, the same exit status.
    const followed = await user.run(["template", "logs", "broken", "--follow"]);
    expect(followed.status).toBe(1);
    expect(followed.stdout).toContain("step 2/2 (Dockerfile line 3)");
    expect(followed.stderr).toMatch(errorLine("template_build_failed"));
    const missing = await user.run(["template", "build", root, "--name", "broken", "--file", "Nope"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(errorLine("invalid_build_context"));
  });

  test("in a terminal, the log lines scroll above a bar of the steps done, neither garbling the other", async () => {
    const root = context("barred", {
      Dockerfile:
        "FROM ubuntu\nRUN printf 'one\\rtwo\\n'\nRUN for i in 1 2 3; do echo line $i; sleep 0.3; done\nENV DONE=yes\n",
    });
    const pane = inTerminal(["template", "build", root, "--name", "barred"]);
    const screen = await pane.waitFor(/^STATUS=\d+$/m, 120_000);
    expect(screen).toMatch(/^STATUS=0$/m);
    const lines = screen.split("\n");
    for (const expected of [
      "step 1/3 (Dockerfile line 2): RUN printf 'one\\rtwo\\n'",
      "onetwo",
      "step 2/3 (Dockerfile line 3): RUN for i in 1 2 3; do echo line $i; sleep 0.3; done",
      "line 1",
      "line 2",
      "line 3",
      "step 3/3 (Dockerfile line 4): ENV DONE=yes",
    ])
      expect(lines, screen).toContain(expected);
    // The bar, once, below the log: every step done.
    expect(screen.match(/3\/3 steps/g), screen).toHaveLength(1);
    expect(screen).toMatch(/^barred +█{30} 3\/3 steps +\d+s\s*\nBuilt template barred /m);
  });

  test("Ctrl-C cancels the build on the server and exits 130", async () => {
    const root = context("slow", { Dockerfile: "FROM ubuntu\nRUN echo started; sleep 120\n" });
    const pane = inTerminal(["template", "build", root, "--name", "slow", "--force"]);
    await pane.waitFor(/^started$/m, 120_000);
    execFileSync("tmux", ["send-keys", "-t", pane.name, "C-c"]);
    const screen = await pane.waitFor(/^STATUS=\d+$/m, 60_000);
    expect(screen).toMatch(/^STATUS=130$/m);
    expect(screen).toMatch(/^paddock: cancelled the build of template slow \(cancelled\)$/m);
    await expect
      .poll(
        async () =>
          (await user.json<{ builds: Array<{ status: string }> }>(["template", "show", "slow"])).builds[0]
            ?.status,
        {
          timeout: 30_000,
        },
      )
      .toBe("cancelled");
  });
});
