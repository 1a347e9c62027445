import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { wsEchoServer } from "../../../test/runtime-api/ws-echo-server.js";
import { generateSchemaTypes } from "../scripts/schema-types.js";
import {
  AuthenticationError,
  CommandExitError,
  NotFoundError,
  Paddock,
  PermissionError,
  Sandbox,
} from "../src/index.js";

describe("the TypeScript SDK against a running Paddock", () => {
  let t: TestServer;
  let apiKey: string;
  let sandbox: Sandbox;
  const connection = () => ({ baseUrl: t.url, apiKey });

  beforeAll(async () => {
    t = await startTestServer();
    await Paddock.signup("sdk@example.com", "correct horse battery", { baseUrl: t.url });
    const { client, session } = await Paddock.login("sdk@example.com", "correct horse battery", {
      baseUrl: t.url,
    });
    expect(session.account.email).toBe("sdk@example.com");
    apiKey = (await client.keys.create({ name: "sdk" })).secret;
    sandbox = await Sandbox.create({
      ...connection(),
      template: "python",
      env: { GREETING: "hi" },
      metadata: { suite: "sdk" },
      timeoutSeconds: 600,
    });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("the generated types match the committed OpenAPI document", async () => {
    expect(readFileSync(join(import.meta.dirname, "../src/schema.gen.ts"), "utf8")).toBe(
      await generateSchemaTypes(),
    );
  });

  test("commands: results, streaming callbacks, typed exit errors", async () => {
    expect(sandbox.state).toBe("Running");
    expect((await sandbox.commands.run("echo $GREETING")).stdout).toBe("hi\n");
    const seen: string[] = [];
    const streamed = await sandbox.commands.run("for i in 1 2 3; do echo $i; sleep 0.1; done", {
      onStdout: (text) => seen.push(text),
    });
    expect(seen.join("")).toBe("1\n2\n3\n");
    expect(streamed.exitCode).toBe(0);
    const failure = await sandbox.commands.run("echo bad >&2; exit 3").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CommandExitError);
    expect(failure).toMatchObject({ exitCode: 3, stderr: "bad\n" });
  });

  test("files: text and bytes, list, search, move, remove, directories", async () => {
    await sandbox.files.write("/work/hello.txt", "hello\n");
    expect(await sandbox.files.read("/work/hello.txt")).toBe("hello\n");
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    await sandbox.files.write("/work/data.bin", bytes);
    expect(await sandbox.files.read("/work/data.bin", { format: "bytes" })).toEqual(bytes);
    await sandbox.files.makeDir("/work/sub/dir");
    expect((await sandbox.files.list("/work")).map((entry) => entry.path)).toEqual([
      "/work/data.bin",
      "/work/hello.txt",
      "/work/sub",
    ]);
    expect((await sandbox.files.search("/work", "*.txt")).map((entry) => entry.path)).toEqual([
      "/work/hello.txt",
    ]);
    await sandbox.files.move("/work/hello.txt", "/work/sub/hello.txt");
    await sandbox.files.remove("/work/sub", { recursive: true });
    await expect(sandbox.files.read("/work/sub/hello.txt")).rejects.toBeInstanceOf(NotFoundError);
  });

  test("stateful code", async () => {
    const context = await sandbox.createCodeContext("python");
    await sandbox.runCode("total = 40", { context: context.id });
    const result = await sandbox.runCode("total + 2", { context: context.id });
    expect(result.results[0]).toMatchObject({ "text/plain": "42" });
    expect((await sandbox.runCode("1/0", { context: context.id })).error).toMatchObject({
      name: "ZeroDivisionError",
    });
  });

  test("endpoints: an HTTP server and a WebSocket echo in the sandbox answer through the public URL", async () => {
    const web = await Sandbox.create({ ...connection(), template: "node" });
    await web.files.write("/root/server.js", wsEchoServer);
    await web.commands.run("node /root/server.js > /root/server.log 2>&1", { background: true });
    const { url } = await web.getEndpoint(8080);
    expect(url.startsWith(`${t.url}/sandboxes/${web.id}/ports/8080/`)).toBe(true);
    await expect
      .poll(async () => (await fetch(url).catch(() => undefined))?.status, { timeout: 20_000 })
      .toBe(200);
    expect(await (await fetch(url)).text()).toBe("plain http ok");
    const socket = new WebSocket(`${url.replace(/^http/, "ws")}socket`);
    const reply = await new Promise<string>((resolve, reject) => {
      socket.on("open", () => socket.send("ping"));
      socket.on("message", (data) => resolve(data.toString()));
      socket.on("error", reject);
    });
    socket.close();
    expect(reply).toBe("echo: ping");
    // A tampered URL, or another account, gets nothing.
    expect(
      (await fetch(url.replace(/\.([A-Za-z0-9_-]{43})\//, ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/")))
        .status,
    ).toBe(404);
    await Paddock.signup("other@example.com", "correct horse battery", { baseUrl: t.url });
    const { client: other } = await Paddock.login("other@example.com", "correct horse battery", {
      baseUrl: t.url,
    });
    const otherKey = (await other.keys.create()).secret;
    const foreign = await Sandbox.connect(web.id, { baseUrl: t.url, apiKey: otherKey }).catch(
      (error: unknown) => error,
    );
    expect(foreign).toBeInstanceOf(NotFoundError);
    await web.kill();
    expect((await fetch(url)).status).toBe(404);
  });

  test("metrics, a metrics watch, diagnostics, the template filter and usage per day", async () => {
    const sample = await sandbox.metrics();
    expect(sample.cpu_count).toBeGreaterThan(0);
    expect(sample.mem_used_mib).toBeGreaterThan(0);
    expect(sample.mem_used_mib).toBeLessThanOrEqual(sample.mem_total_mib);
    const watched: number[] = [];
    for await (const each of sandbox.watchMetrics()) {
      expect(each.cpu_used_pct).toBeGreaterThanOrEqual(0);
      watched.push(each.timestamp);
      if (watched.length === 2) break;
    }
    expect(watched[1]).toBeGreaterThan(watched[0] ?? Number.POSITIVE_INFINITY);

    expect((await sandbox.diagnostics.logs()).text).toContain("Running");
    expect((await sandbox.diagnostics.events({ scope: "runtime" })).text).toContain(
      "runtime container running",
    );
    await expect(sandbox.diagnostics.logs({ scope: "nope" })).rejects.toMatchObject({
      code: "invalid_request",
    });

    const listed = async (template: string) =>
      (await Sandbox.list({ ...connection(), template })).items.map((item) => item.id);
    expect(await listed("python")).toContain(sandbox.id);
    expect(await listed("node")).toEqual([]);

    const { client } = await Paddock.login("sdk@example.com", "correct horse battery", { baseUrl: t.url });
    const usage = await client.usage.get();
    expect(usage.days.at(-1)?.date).toBe(new Date().toISOString().slice(0, 10));
    const total = usage.days.reduce((sum, day) => sum + day.minutes, 0);
    expect(Math.abs(total - usage.usedMinutes)).toBeLessThan(0.01);
  });

  test("lifecycle: metadata, renew, pause, resume, connect, list, kill", async () => {
    await sandbox.setMetadata({ suite: null, stage: "done" });
    expect(sandbox.metadata).toEqual({ stage: "done" });
    await sandbox.renew(3600);
    expect(Date.parse(sandbox.expiresAt ?? "")).toBeGreaterThan(Date.now() + 3_500_000);
    await sandbox.pause();
    await expect.poll(async () => (await sandbox.refresh()).state).toBe("Paused");
    await sandbox.resume();
    await expect.poll(async () => (await sandbox.refresh()).state).toBe("Running");
    const again = await Sandbox.connect(sandbox.id, connection());
    expect(again.id).toBe(sandbox.id);
    expect((await Sandbox.list(connection())).items.map((item) => item.id)).toContain(sandbox.id);
    expect((await Sandbox.templates(connection())).map((template) => template.id)).toContain("python");
    await Sandbox.kill(sandbox.id, connection());
    const gone = await Sandbox.connect(sandbox.id, connection()).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).toMatchObject({ code: "sandbox_not_found", status: 404 });
  });

  test("sleep and wake: a lifecycle on create, the plan's defaults, a pause to disk and a command that wakes it", async () => {
    const { client } = await Paddock.login("sdk@example.com", "correct horse battery", { baseUrl: t.url });
    const { plan } = await client.usage.get();
    expect(plan.lifecycle).toEqual({ idleTimeout: 900, maxPaused: 30 * 86_400 });
    const sleeper = await Sandbox.create({
      ...connection(),
      template: "python",
      timeoutSeconds: 600,
      lifecycle: { onTimeout: "pause", processesKeepAwake: false, maxPaused: null },
    });
    expect(sleeper.lifecycle).toEqual({
      onTimeout: "pause",
      idleTimeout: plan.lifecycle.idleTimeout,
      processesKeepAwake: false,
      autoResume: true,
      keepMemory: true,
      maxPaused: null,
    });
    expect(sleeper.pausedTo).toBeNull();
    expect(Date.parse(sleeper.idleAt ?? "")).toBeGreaterThan(Date.now());
    await sleeper.commands.run("echo kept > /root/note");
    await sleeper.pause({ to: "disk" });
    expect(sleeper.pausedTo).toBe("disk");
    await expect.poll(async () => (await sleeper.refresh()).state, { timeout: 60_000 }).toBe("Paused");
    expect(typeof sleeper.memoryPreserved).toBe("boolean");
    const { resumes } = await client.usage.get();
    expect((await sleeper.commands.run("cat /root/note")).stdout).toBe("kept\n");
    await sleeper.refresh();
    expect(sleeper.state).toBe("Running");
    expect(sleeper.pausedTo).toBeNull();
    expect(sleeper.memoryPreserved).toBeNull();
    expect((await client.usage.get()).resumes).toBe(resumes + 1);
    await sleeper.kill();
  });

  test("keys and errors: scoped keys are refused where they do not apply; bad keys are typed", async () => {
    const { client } = await Paddock.login("sdk@example.com", "correct horse battery", { baseUrl: t.url });
    const scoped = await client.keys.create({ scope: "memory" });
    await expect(Sandbox.list({ baseUrl: t.url, apiKey: scoped.secret })).rejects.toBeInstanceOf(
      PermissionError,
    );
    const rotated = await client.keys.rotate(scoped.key.id);
    expect(rotated.secret).not.toBe(scoped.secret);
    expect((await client.keys.list()).map((key) => key.id)).toContain(scoped.key.id);
    await client.keys.delete(scoped.key.id);
    await expect(Sandbox.list({ baseUrl: t.url, apiKey: "pk_nope" })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    await client.logout();
    await expect(client.me()).rejects.toMatchObject({ code: "unauthorized" });
  });

  test("volumes: create, mount into sandboxes, refused while mounted, delete", async () => {
    const paddock = new Paddock(connection());
    const volume = await paddock.volumes.create("sdk-data", { size: "32Mi" });
    expect(volume).toMatchObject({ name: "sdk-data", sizeBytes: 32 * 2 ** 20 });
    expect((await paddock.volumes.list()).map((listed) => listed.id)).toEqual([volume.id]);
    const writer = await Sandbox.create({
      ...connection(),
      volumes: [{ volume: "sdk-data", mountPath: "/data" }],
    });
    await writer.commands.run("echo kept > /data/kept.txt");
    await expect(paddock.volumes.delete(volume.id)).rejects.toMatchObject({
      code: "volume_in_use",
      status: 409,
    });
    await writer.kill();
    const reader = await Sandbox.create({
      ...connection(),
      volumes: [{ volume: "sdk-data", mountPath: "/data", readOnly: true }],
    });
    expect((await reader.commands.run("cat /data/kept.txt")).stdout).toBe("kept\n");
    await reader.kill();
    await paddock.volumes.delete(volume.id);
    await expect(paddock.volumes.get(volume.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(paddock.volumes.create("bad name")).rejects.toMatchObject({ code: "invalid_volume_name" });
  });
});
