/**
 * Isolated sessions driven by the published OpenSandbox SDK, unmodified, against a real Paddock
 * server and the execd of a real sandbox under the default secure runtime (gVisor).
 */
import { ConnectionConfig, type OutputMessage, Sandbox } from "@alibaba-group/opensandbox";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const texts = (messages: OutputMessage[]) => messages.map((message) => message.text);

describe("isolated sessions", () => {
  let t: TestServer;
  let sandbox: Sandbox;

  beforeAll(async () => {
    t = await startTestServer();
    const connectionConfig = new ConnectionConfig({
      domain: t.url,
      apiKey: t.apiKey,
      requestTimeoutSeconds: 60,
    });
    sandbox = await Sandbox.create({
      connectionConfig,
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
      timeoutSeconds: 600,
    });
    const setup = await sandbox.commands.run(
      "mkdir -p /workspace /srv/data && echo base > /workspace/a.txt && echo data > /srv/data/d.txt",
    );
    expect(setup.exitCode).toBe(0);
  });
  afterAll(async () => {
    await sandbox?.kill();
    await t?.dispose();
  });

  test("capabilities say sessions, diff and commit are available", async () => {
    expect(await sandbox.isolation.capabilities()).toMatchObject({
      available: true,
      isolator: "paddock-overlay",
      diff_supported: true,
      commit_supported: true,
      userns_available: true,
    });
  });

  test("runs share one shell, see only the session's processes, and keep writes out of the workspace", async () => {
    const session = await sandbox.isolation.create({ workspace: { path: "/workspace", mode: "overlay" } });
    try {
      const first = await session.run("cd /tmp && export KEPT=yes && echo changed > /workspace/a.txt");
      expect(first.exitCode).toBe(0);
      const second = await session.run("pwd; echo $KEPT; cat /workspace/a.txt");
      expect(texts(second.logs.stdout)).toEqual(["/tmp", "yes", "changed"]);
      // The session's init, its agent, its shell, and the pipeline's ls and grep.
      const processes = await session.run("ls /proc | grep -c '^[0-9]'");
      expect(Number(texts(processes.logs.stdout)[0])).toBeLessThanOrEqual(6);
      expect(texts((await sandbox.commands.run("cat /workspace/a.txt")).logs.stdout)).toEqual(["base"]);
      expect(await session.get()).toMatchObject({ status: "active", workspace: { path: "/workspace" } });
    } finally {
      await session.delete();
    }
  });

  test("binds bring sandbox paths into a session, read-only when asked", async () => {
    const outcome = await sandbox.isolation.withSession(
      {
        workspace: { path: "/workspace", mode: "overlay" },
        binds: [{ source: "/srv/data", dest: "/mnt/data", readonly: true }],
      },
      async (session) => {
        const read = await session.run("cat /mnt/data/d.txt; echo x > /mnt/data/new.txt || echo refused");
        return { stdout: texts(read.logs.stdout), info: await session.get() };
      },
    );
    expect(outcome.stdout).toEqual(["data", "refused"]);
    expect(outcome.info.binds).toEqual([{ source: "/srv/data", dest: "/mnt/data", readonly: true }]);
    expect(texts((await sandbox.commands.run("ls /srv/data")).logs.stdout)).toEqual(["d.txt"]);
  });
});
