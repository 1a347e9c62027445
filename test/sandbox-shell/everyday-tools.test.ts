import { readFileSync } from "node:fs";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Paddock, Sandbox } from "../../packages/sdk/src/index.js";

// The tools every user and agent runs first, through the SDK as a user runs them, under each
// runtime. A runtime upgrade or downgrade that breaks the shell (gVisor's statx once made `ls`
// answer "Invalid argument") fails here.
//
// The templates whose images a test run has: those setup builds (scripts/setup.sh) and those
// `make test` adds (TEST_TEMPLATES in the Makefile), read from there so the lists stay one.
const repository = new URL("../../", import.meta.url);
const setupTemplates = /^npx paddock templates build (.+)$/m.exec(
  readFileSync(new URL("scripts/setup.sh", repository), "utf8"),
)?.[1];
const testTemplates = /^TEST_TEMPLATES := (.+)$/m.exec(
  readFileSync(new URL("Makefile", repository), "utf8"),
)?.[1];
const templates = `${setupTemplates ?? ""} ${testTemplates ?? ""}`.split(" ").filter((id) => id !== "");

describe.each(["gvisor", "runc"] as const)("everyday tools in a sandbox under %s", (runtime) => {
  let t: TestServer;
  let python: Sandbox;
  let node: Sandbox;
  let connection: { baseUrl: string; apiKey: string; timeoutSeconds: number };

  beforeAll(async () => {
    t = await startTestServer({
      config: {
        secure_runtime: { type: runtime === "runc" ? "" : "gvisor" },
        // One sandbox per template, quicker than the default create rate allows.
        rate_limits: { creates_per_key: 100, creates_per_account: 100 },
      },
    });
    await Paddock.signup("tools@example.com", "correct horse battery", { baseUrl: t.url });
    const { client } = await Paddock.login("tools@example.com", "correct horse battery", { baseUrl: t.url });
    const { secret } = await client.keys.create({ name: "tools" });
    connection = { baseUrl: t.url, apiKey: secret, timeoutSeconds: 600 };
    [python, node] = await Promise.all([
      Sandbox.create({ ...connection, template: "python" }),
      Sandbox.create({ ...connection, template: "node" }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([python?.kill(), node?.kill()].map((kill) => kill?.catch(() => undefined)));
    await t?.dispose();
  });

  // Every command must leave stderr empty, on both runtimes: Debian's runsc 0.0~20240729 answered
  // lgetxattr on a symlink with EBADF, so `ls -l` wrote "ls: /bin: Bad file descriptor" for each
  // (decision 0177: setup builds runsc with that fixed).
  const run = async (sandbox: Sandbox, command: string) => {
    const result = await sandbox.commands.run(command);
    expect({ command, stderr: result.stderr, exitCode: result.exitCode }).toEqual({
      command,
      stderr: "",
      exitCode: 0,
    });
    return result.stdout;
  };

  test("ls, stat, find, du and df", async () => {
    await run(
      python,
      "mkdir -p /tmp/tree/sub && printf 'hello\\n' > /tmp/tree/sub/a.txt && ln -s sub/a.txt /tmp/tree/link",
    );
    expect(await run(python, "ls /")).toMatch(/^bin$[\s\S]*^etc$[\s\S]*^tmp$/m);
    // The image's own tree: directories, files and the symlinks of a merged /usr.
    const root = await run(python, "ls -la /");
    expect(root).toMatch(/^total \d+$/m);
    expect(root).toMatch(/^l\S+ +\d+ root root +\d+ .* bin -> usr\/bin$/m);
    expect(root).toMatch(/^d\S+ +\d+ root root +\d+ .* etc$/m);
    expect(await run(python, "ls -l /etc/hostname /etc/passwd | wc -l")).toBe("2\n");
    // A symlink the sandbox makes on its root filesystem (under gVisor, /tmp is the Sentry's tmpfs).
    expect(await run(python, "ln -sfn /etc /root/etc-link && ls -l /root/etc-link")).toMatch(
      /^l\S+ .* \/root\/etc-link -> \/etc$/m,
    );
    const listing = await run(python, "ls -la /tmp/tree");
    expect(listing).toMatch(/^total \d+/);
    expect(listing).toMatch(/^d\S+ +\d+ root root +\d+ .* sub$/m);
    expect(listing).toMatch(/^l\S+ .* link -> sub\/a\.txt$/m);
    expect(await run(python, "stat -c '%s %F %U' /tmp/tree/sub/a.txt")).toBe("6 regular file root\n");
    expect(await run(python, "stat -L -c '%s' /tmp/tree/link")).toBe("6\n");
    expect(await run(python, "cd /tmp/tree && find . | sort")).toBe(".\n./link\n./sub\n./sub/a.txt\n");
    expect(await run(python, "du -s --apparent-size -B1 /tmp/tree/sub/a.txt")).toMatch(
      /^6\s+\/tmp\/tree\/sub\/a\.txt$/m,
    );
    expect(await run(python, "df -P /tmp")).toMatch(
      /^Filesystem +\d+-blocks +Used +Available +Capacity +Mounted on\n\S+ +\d+ +\d+ +\d+ +\d+% +\/\S*$/m,
    );
  });

  test("cp -a keeps modes and links; tar round-trips a tree", async () => {
    await run(
      python,
      "mkdir -p /tmp/src/d && printf 'x\\n' > /tmp/src/d/f && chmod 640 /tmp/src/d/f && ln -sf d/f /tmp/src/l",
    );
    await run(python, "cp -a /tmp/src /tmp/copy");
    expect(await run(python, "stat -c '%a %F' /tmp/copy/d/f /tmp/copy/l")).toBe(
      "640 regular file\n777 symbolic link\n",
    );
    await run(
      python,
      "tar -C /tmp -czf /tmp/src.tgz src && mkdir -p /tmp/untar && tar -C /tmp/untar -xzf /tmp/src.tgz",
    );
    expect(await run(python, "tar -tzf /tmp/src.tgz | sort")).toBe("src/\nsrc/d/\nsrc/d/f\nsrc/l\n");
    expect(await run(python, "cat /tmp/untar/src/l && stat -c '%a' /tmp/untar/src/d/f")).toBe("x\n640\n");
  });

  test("git init, commit and status", async () => {
    const out = await run(
      python,
      [
        "cd /tmp && rm -rf repo && git init -q -b main repo && cd repo",
        "git config user.email t@example.com && git config user.name T",
        "echo one > one.txt && git add one.txt && git commit -q -m first",
        "echo two > two.txt && git status --porcelain && git log --format=%s",
      ].join(" && "),
    );
    expect(out).toBe("?? two.txt\nfirst\n");
  });

  test("pip and python, npm and node", async () => {
    expect(await run(python, "pip --version")).toMatch(/^pip \d+\.\d+.* from \S+ \(python 3\.\d+\)$/m);
    expect(await run(python, "python3 -c 'import os; print(len(os.listdir(\"/\")) > 5)'")).toBe("True\n");
    expect(await run(node, "npm --version")).toMatch(/^\d+\.\d+\.\d+\n$/);
    const init = await run(
      node,
      "mkdir -p /tmp/app && cd /tmp/app && npm init -y >/dev/null && node -p 'require(\"./package.json\").name'",
    );
    expect(init).toBe("app\n");
  });

  test("ls -la / writes nothing to stderr in every template", async () => {
    expect(templates).toEqual(
      expect.arrayContaining(["python", "node", "ubuntu", "code-interpreter", "playwright"]),
    );
    // Two at a time: the account's other two sandboxes stay up, under the Free plan's five.
    const failures: unknown[] = [];
    for (let i = 0; i < templates.length; i += 2) {
      await Promise.all(
        templates.slice(i, i + 2).map(async (template) => {
          const sandbox = await Sandbox.create({ ...connection, template });
          try {
            const result = await sandbox.commands.run("ls -la /");
            if (result.stderr !== "" || result.exitCode !== 0 || !/^total \d+$/m.test(result.stdout)) {
              failures.push({ template, stderr: result.stderr, exitCode: result.exitCode });
            }
          } finally {
            await sandbox.kill();
          }
        }),
      );
    }
    expect(failures).toEqual([]);
  }, 900_000);
});
