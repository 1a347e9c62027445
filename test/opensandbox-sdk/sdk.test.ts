/**
 * The published OpenSandbox SDK, unmodified, against a real Paddock runtime API (`/v1`) and the
 * execd inside real sandboxes. Each describe block covers one part of the SDK and shares the
 * server (and, where it can, one sandbox) opened below.
 */
import { randomUUID } from "node:crypto";
import {
  ConnectionConfig,
  type OutputMessage,
  Sandbox,
  SandboxApiException,
  SandboxManager,
} from "@alibaba-group/opensandbox";
import { testDocker } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const image = { uri: "paddock/base:bookworm" };
const entrypoint = ["sleep", "infinity"];

let t: TestServer;
let connectionConfig: ConnectionConfig;

/** A sandbox created through the SDK, with the options every test shares. */
function createSandbox(options: Partial<Parameters<typeof Sandbox.create>[0]> = {}): Promise<Sandbox> {
  return Sandbox.create({ connectionConfig, image, entrypoint, timeoutSeconds: 600, ...options });
}

const texts = (messages: OutputMessage[]) => messages.map((message) => message.text);

beforeAll(async () => {
  t = await startTestServer();
  connectionConfig = new ConnectionConfig({ domain: t.url, apiKey: t.apiKey, requestTimeoutSeconds: 60 });
});
afterAll(async () => {
  await t?.dispose();
});

describe("lifecycle through the OpenSandbox SDK", () => {
  test("create, get, list, renew, pause, resume and kill", async () => {
    const sandbox = await createSandbox({ metadata: { suite: "opensandbox-sdk" } });
    try {
      const info = await sandbox.getInfo();
      expect(info.id).toBe(sandbox.id);
      expect(info.status.state).toBe("Running");
      expect(info.metadata).toEqual({ suite: "opensandbox-sdk" });

      const manager = SandboxManager.create({ connectionConfig });
      const listed = await manager.listSandboxInfos({ metadata: { suite: "opensandbox-sdk" } });
      expect(listed.items.map((item) => item.id)).toEqual([sandbox.id]);

      const renewed = await sandbox.renew(1800);
      expect(renewed.expiresAt?.getTime()).toBeGreaterThan(Date.now() + 1_700_000);

      await sandbox.pause();
      await expect
        .poll(async () => (await sandbox.getInfo()).status.state, { timeout: 30_000 })
        .toBe("Paused");
      // resume() answers with a new instance connected to the sandbox's execd again.
      const resumed = await sandbox.resume({ readyTimeoutSeconds: 60 });
      expect((await resumed.getInfo()).status.state).toBe("Running");
      const afterResume = await resumed.commands.run("echo still-here");
      expect(texts(afterResume.logs.stdout)).toEqual(["still-here"]);
    } finally {
      // A fresh client: a failed step may have closed the shared one's transport.
      await SandboxManager.create({
        connectionConfig: new ConnectionConfig({ domain: t.url, apiKey: t.apiKey }),
      })
        .killSandbox(sandbox.id)
        .catch(() => undefined);
    }
    const gone = await SandboxManager.create({ connectionConfig })
      .getSandboxInfo(sandbox.id)
      .then(
        (info) => info.status.state,
        (error: SandboxApiException) => error.statusCode,
      );
    expect(["Terminated", 404]).toContain(gone);
  });
});

describe("commands, sessions and files through the OpenSandbox SDK", () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await createSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  test("a command's output reaches onStdout one line at a time, and its logs join to the lines", async () => {
    const seen: string[] = [];
    const errors: string[] = [];
    const execution = await sandbox.commands.run(
      "printf 'n1\\nn2\\nn3\\n'; echo connect-ok; echo warn >&2; printf 'no newline'",
      undefined,
      {
        onStdout: (message) => void seen.push(message.text),
        onStderr: (message) => void errors.push(message.text),
      },
    );
    expect(seen).toEqual(["n1", "n2", "n3", "connect-ok", "no newline"]);
    expect(texts(execution.logs.stdout)).toEqual(seen);
    expect(errors).toEqual(["warn"]);
    expect(execution.exitCode).toBe(0);

    const connected = await sandbox.commands.run("echo connect-ok");
    expect(connected.logs.stdout.map((message) => message.text).join("")).toBe("connect-ok");

    // OpenSandbox's execd ends a command's line at "\n" or "\r" ("\r\n" once) and sends a blank
    // line as "\n", so a progress bar's redraws arrive one by one.
    const progress = await sandbox.commands.run("echo a; echo; printf ' 50%%\\r100%%\\r\\ndone\\r\\n'");
    expect(texts(progress.logs.stdout)).toEqual(["a", "\n", " 50%", "100%", "done"]);

    const failed = await sandbox.commands.run("echo before; exit 3");
    expect(failed.exitCode).toBe(3);
    expect(texts(failed.logs.stdout)).toEqual(["before"]);
  });

  test("a background command's status and logs", async () => {
    const started = await sandbox.commands.run("echo first; sleep 0.3; echo second", { background: true });
    expect(started.id).toBeTruthy();
    const id = started.id as string;
    await expect
      .poll(async () => (await sandbox.commands.getCommandStatus(id)).running, { timeout: 10_000 })
      .toBe(false);
    expect(await sandbox.commands.getCommandStatus(id)).toMatchObject({ id, running: false, exitCode: 0 });
    const logs = await sandbox.commands.getBackgroundCommandLogs(id);
    expect(logs.content).toBe("first\nsecond\n");
    expect(logs.cursor).toBe(2);
    expect((await sandbox.commands.getBackgroundCommandLogs(id, 1)).content).toBe("second\n");
  });

  test("sessions keep their shell's state between runs", async () => {
    const session = await sandbox.commands.createSession({ workingDirectory: "/tmp" });
    const first = await sandbox.commands.runInSession(session, "export KEPT=yes; cd /var; pwd");
    expect(texts(first.logs.stdout)).toEqual(["/var"]);
    const seen: string[] = [];
    const second = await sandbox.commands.runInSession(
      session,
      "pwd; echo $KEPT; echo; printf 'x\\ry\\r\\na\\nb'",
      undefined,
      {
        onStdout: (message) => void seen.push(message.text),
      },
    );
    // A session's output is cut as Go's bufio.ScanLines cuts it, as in OpenSandbox's execd.
    expect(seen).toEqual(["/var", "yes", "", "x\ry", "a", "b"]);
    expect(texts(second.logs.stdout)).toEqual(seen);
    await sandbox.commands.deleteSession(session);
    await expect(sandbox.commands.runInSession(session, "true")).rejects.toMatchObject({ statusCode: 404 });
  });

  test("files: write, read (whole and by lines), search, info and delete", async () => {
    const directory = `/tmp/sdk-${randomUUID()}`;
    await sandbox.files.writeFiles([
      { path: `${directory}/notes.txt`, data: "one\ntwo\nthree\nfour\n" },
      { path: `${directory}/todo.txt`, data: "x" },
      { path: `${directory}/nested/deep.md`, data: "# deep" },
    ]);
    expect(await sandbox.files.readFile(`${directory}/notes.txt`)).toBe("one\ntwo\nthree\nfour\n");
    expect(await sandbox.files.readFile(`${directory}/notes.txt`, { offset: 2, limit: 2 })).toBe(
      "two\nthree",
    );

    const paths = async (pattern: string) =>
      (await sandbox.files.search({ path: directory, pattern })).map((file) => file.path).sort();
    expect(await paths("*.txt")).toEqual([`${directory}/notes.txt`, `${directory}/todo.txt`]);
    expect(await paths("{notes*,todo*}")).toEqual([`${directory}/notes.txt`, `${directory}/todo.txt`]);
    expect(await paths("*.md")).toEqual([`${directory}/nested/deep.md`]);

    const info = await sandbox.files.getFileInfo([`${directory}/todo.txt`]);
    expect(info[`${directory}/todo.txt`]).toMatchObject({ path: `${directory}/todo.txt`, size: 1 });

    await sandbox.files.deleteFiles([`${directory}/todo.txt`]);
    expect(await paths("*.txt")).toEqual([`${directory}/notes.txt`]);
    await sandbox.files.deleteDirectories([directory]);
    await expect(sandbox.files.getFileInfo([`${directory}/notes.txt`])).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});

describe("named volumes with a subPath through the OpenSandbox SDK", () => {
  const volume = `paddock-sdk-test-${randomUUID().slice(0, 8)}`;

  afterAll(async () => {
    await testDocker
      .getVolume(volume)
      .remove()
      .catch(() => undefined);
  });

  test("a pvc volume's subPath mounts that directory only, created when missing", async () => {
    const writer = await createSandbox({
      volumes: [{ name: "data", pvc: { claimName: volume }, mountPath: "/data", subPath: "projects/alpha" }],
    });
    try {
      await writer.commands.run("echo from-alpha > /data/file.txt");
    } finally {
      await writer.kill();
    }
    const reader = await createSandbox({
      volumes: [{ name: "data", pvc: { claimName: volume }, mountPath: "/all" }],
    });
    try {
      const listed = await reader.commands.run("cat /all/projects/alpha/file.txt; ls /all");
      expect(texts(listed.logs.stdout)).toEqual(["from-alpha", "projects"]);
      // A symlink written into the volume must not carry a later mount outside it.
      await reader.commands.run("ln -s /etc /all/escape");
    } finally {
      await reader.kill();
    }
    await expect(
      createSandbox({
        volumes: [{ name: "data", pvc: { claimName: volume }, mountPath: "/x", subPath: "escape" }],
      }),
    ).rejects.toMatchObject({ statusCode: 400 });
    for (const subPath of ["../other", "/etc"]) {
      await expect(
        createSandbox({ volumes: [{ name: "data", pvc: { claimName: volume }, mountPath: "/x", subPath }] }),
      ).rejects.toMatchObject({ statusCode: 400 });
    }
  });
});

describe("wire details the OpenSandbox SDK relies on", () => {
  test("POST /v1/metrics/events takes the SDK's event with 204, and refuses bad ones with a 4xx", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${t.url}/v1/metrics/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "OPEN-SANDBOX-API-KEY": t.apiKey, ...headers },
        body,
      });
    const event = {
      eventType: "sandbox.create",
      sandboxId: "sbx-1",
      image: "python:3.12",
      createDurationMs: 1842,
      success: true,
    };
    const accepted = await post(JSON.stringify(event), { "User-Agent": "OpenSandbox-JS-SDK/0.1.11" });
    expect(accepted.status).toBe(204);
    expect(await accepted.text()).toBe("");
    expect((await post(JSON.stringify({ ...event, eventType: "sandbox.future", extra: 1 }))).status).toBe(
      204,
    );
    expect((await post(JSON.stringify({ ...event, eventType: 5 }))).status).toBe(400);
    expect((await post(JSON.stringify({ ...event, createDurationMs: -1 }))).status).toBe(400);
    expect((await post("{oops")).status).toBe(400);
    expect((await post(JSON.stringify({ ...event, image: "x".repeat(64 * 1024) }))).status).toBe(413);
    expect((await post(JSON.stringify(event), { "OPEN-SANDBOX-API-KEY": "wrong" })).status).toBe(401);
  });

  test("answers, errors included, carry the caller's X-Request-ID, and the SDK reports it", async () => {
    const requestId = `sdk-${randomUUID()}`;
    for (const [path, init, status] of [
      ["/v1/sandboxes/nope", { headers: { "OPEN-SANDBOX-API-KEY": t.apiKey } }, 404],
      ["/v1/sandboxes", { headers: {} }, 401],
      [
        "/v1/sandboxes",
        {
          method: "POST",
          body: "{oops",
          headers: { "OPEN-SANDBOX-API-KEY": t.apiKey, "content-type": "application/json" },
        },
        400,
      ],
      ["/v1/nowhere", { headers: { "OPEN-SANDBOX-API-KEY": t.apiKey } }, 404],
      // Refused by the router before any route or hook runs.
      ["/v1/sandboxes/%E0%A4%A", { headers: { "OPEN-SANDBOX-API-KEY": t.apiKey } }, 400],
      [`/v1/sandboxes/${"x".repeat(200)}`, { headers: { "OPEN-SANDBOX-API-KEY": t.apiKey } }, 414],
    ] as Array<[string, RequestInit & { headers: Record<string, string> }, number]>) {
      const response = await fetch(`${t.url}${path}`, {
        ...init,
        headers: { ...init.headers, "X-Request-ID": requestId },
      });
      expect(response.status, path).toBe(status);
      expect(response.headers.get("x-request-id"), path).toBe(requestId);
    }

    const traced = new ConnectionConfig({
      domain: t.url,
      apiKey: t.apiKey,
      headers: { "X-Request-ID": requestId },
    });
    const error = await SandboxManager.create({ connectionConfig: traced })
      .getSandboxInfo("no-such-sandbox")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxApiException);
    expect(error).toMatchObject({ statusCode: 404, requestId });
  });
});
