import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type BuildLogEntry,
  ConflictError,
  NotFoundError,
  Paddock,
  Sandbox,
  TemplateBuildError,
} from "../src/index.js";

/** A build context on disk: path → content. */
function contextOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "paddock-sdk-context-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(root, name, ".."), { recursive: true });
    writeFileSync(join(root, name), content);
  }
  return root;
}

/**
 * A proxy in front of `target` that cuts the first build-log stream through it once it has passed
 * the entry "line 2" on, as a restarting replica or a proxy's limit would.
 */
async function cuttingProxy(target: string): Promise<{ url: string; cuts: number; server: Server }> {
  const proxy = { url: "", cuts: 0, server: createServer() };
  proxy.server.on("request", (incoming, outgoing) => {
    const upstream = request(`${target}${incoming.url}`, {
      method: incoming.method,
      headers: incoming.headers,
    });
    upstream.on("response", (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      const cut = answer.headers["content-type"]?.includes("text/event-stream") && proxy.cuts++ === 0;
      answer.on("data", (chunk: Buffer) => {
        if (!cut || !chunk.includes('"message":"line 2"')) {
          outgoing.write(chunk);
          return;
        }
        // Once the client has that entry (written out), the connection drops.
        answer.destroy();
        outgoing.write(chunk, () => outgoing.destroy());
      });
      answer.on("end", () => outgoing.end());
    });
    upstream.on("error", () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
  return proxy;
}

async function keyOf(t: TestServer, email: string): Promise<string> {
  await Paddock.signup(email, "correct horse battery", { baseUrl: t.url });
  const { client } = await Paddock.login(email, "correct horse battery", { baseUrl: t.url });
  return (await client.keys.create({ name: "templates" })).secret;
}

describe("client.templates against a running Paddock", () => {
  let t: TestServer;
  let alice: Paddock;
  let bob: Paddock;
  let aliceKey: string;
  const contexts: string[] = [];
  const context = (files: Record<string, string>) => {
    const root = contextOf(files);
    contexts.push(root);
    return root;
  };

  beforeAll(async () => {
    t = await startTestServer();
    aliceKey = await keyOf(t, "alice-templates@example.com");
    alice = new Paddock({ baseUrl: t.url, apiKey: aliceKey });
    bob = new Paddock({ baseUrl: t.url, apiKey: await keyOf(t, "bob-templates@example.com") });
  });
  afterAll(async () => {
    // Deleting the templates removes their images from the shared Docker engine.
    for (const template of (await alice?.templates.list().catch(() => [])) ?? [])
      await alice.templates.delete(template.name).catch(() => undefined);
    await t?.dispose();
    for (const root of contexts) rmSync(root, { recursive: true, force: true });
  });

  test("builds a directory with its log, starts a sandbox from it, leaves out what .dockerignore names", async () => {
    const root = context({
      Dockerfile:
        "FROM ubuntu\nCOPY . /srv/app/\nRUN echo built by $(whoami) > /srv/built.txt\nWORKDIR /srv/app\n",
      ".dockerignore": "secret.env\n*.tmp\n",
      "greeting.txt": "hello from the context\n",
      "secret.env": "TOKEN=never-sent\n",
      "scratch.tmp": "left out too\n",
    });
    const logged: BuildLogEntry[] = [];
    const build = await alice.templates.build("greeter", {
      context: root,
      description: "Greets",
      onLog: (entry) => logged.push(entry),
    });
    expect(build).toMatchObject({ status: "ready", reason: null });
    const lines = logged.map((entry) => entry.message);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^step 1\/3 \(Dockerfile line 2\): COPY/),
        expect.stringMatching(/^step 2\/3 \(Dockerfile line 3\): RUN echo built/),
        expect.stringMatching(/^built .*, \d+ MB$/),
      ]),
    );
    // Every entry once, in order.
    expect(logged.map((entry) => entry.seq)).toEqual(logged.map((_entry, index) => index));

    const template = await alice.templates.get("greeter");
    expect(template).toMatchObject({ name: "greeter", description: "Greets", currentBuildId: build.id });
    expect(template.builds.map((item) => item.id)).toEqual([build.id]);
    expect((await alice.templates.list()).map((item) => item.name)).toEqual(["greeter"]);
    const page = await alice.templates.logs("greeter", build.id, { from: 1 });
    expect(page.entries.map((entry) => entry.message)).toEqual(lines.slice(1));
    expect(page.status).toBe("ready");

    const sandbox = await Sandbox.create({ baseUrl: t.url, apiKey: aliceKey, template: "greeter" });
    expect((await sandbox.commands.run("cat /srv/app/greeting.txt /srv/built.txt")).stdout).toBe(
      "hello from the context\nbuilt by root\n",
    );
    expect((await sandbox.commands.run("ls -A /srv/app")).stdout.split("\n").filter(Boolean).sort()).toEqual([
      ".dockerignore",
      "Dockerfile",
      "greeting.txt",
    ]);
    await expect(alice.templates.delete("greeter")).rejects.toMatchObject({ code: "template_in_use" });
    await expect(alice.templates.delete("greeter")).rejects.toBeInstanceOf(ConflictError);
    await sandbox.kill();
  }, 300_000);

  test("a failing RUN rejects with a TemplateBuildError naming its step and Dockerfile line", async () => {
    const root = context({ Dockerfile: "FROM ubuntu\nRUN echo fine\n\nRUN echo broken >&2; exit 3\n" });
    const logged: string[] = [];
    const failure = await alice.templates
      .build("broken", { context: root, onLog: (entry) => logged.push(entry.message) })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TemplateBuildError);
    const error = failure as TemplateBuildError;
    expect(error).toMatchObject({ buildStatus: "error", failedStep: 2, code: "template_build_failed" });
    expect(error.reason).toContain("Dockerfile line 4");
    expect(error.message).toContain(error.reason);
    expect(logged).toContain("broken");
    expect((await alice.templates.getBuild("broken", error.buildId)).status).toBe("error");
  }, 300_000);

  test("a Dockerfile the context lacks is refused before anything is sent", async () => {
    const root = context({ Containerfile: "FROM ubuntu\n" });
    await expect(alice.templates.build("missing", { context: root })).rejects.toThrow(/no Dockerfile in/);
    const built = await alice.templates.build("containerfile", {
      context: root,
      dockerfile: "Containerfile",
    });
    expect(built.status).toBe("ready");
  }, 300_000);

  test("from steps, with files uploaded first", async () => {
    const hash = await alice.templates.uploadFiles(context({ "tool.sh": "echo tool ran\n" }));
    expect(hash).toMatch(/\S/);
    const logged: string[] = [];
    const build = await alice.templates.buildFromSteps("tooled", {
      from: "ubuntu",
      steps: [
        { type: "COPY", files: hash, src: "tool.sh", dest: "/usr/local/bin/tool", mode: 0o755 },
        { type: "RUN", command: "tool > /tool.out" },
      ],
      onLog: (entry) => logged.push(entry.message),
    });
    expect(build.status).toBe("ready");
    expect(logged).toEqual(expect.arrayContaining([expect.stringMatching(/^step 2\/2: RUN tool/)]));
  }, 300_000);

  test("aborting the signal while following cancels the build on the server", async () => {
    const root = context({ Dockerfile: "FROM ubuntu\nRUN echo started; sleep 120\n" });
    const stop = new AbortController();
    const failure = await alice.templates
      .build("slow", {
        context: root,
        force: true,
        signal: stop.signal,
        onLog: (entry) => {
          if (entry.message === "started") stop.abort();
        },
      })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: "AbortError" });
    const [build] = (await alice.templates.get("slow")).builds;
    // The server stops it within about a second of the cancel.
    await expect
      .poll(async () => (await alice.templates.getBuild("slow", build?.id ?? "")).status, { timeout: 30_000 })
      .toBe("cancelled");
  }, 300_000);

  test("a log stream that breaks off is picked up where it stopped: every entry once, in order", async () => {
    const proxy = await cuttingProxy(t.url);
    try {
      const through = new Paddock({ baseUrl: proxy.url, apiKey: aliceKey });
      const logged: BuildLogEntry[] = [];
      const build = await through.templates.build("resumed", {
        context: context({
          Dockerfile: "FROM ubuntu\nRUN for i in 1 2 3 4 5; do echo line $i; sleep 0.3; done\n",
        }),
        force: true,
        onLog: (entry) => logged.push(entry),
      });
      expect(build.status).toBe("ready");
      expect(proxy.cuts).toBeGreaterThan(1);
      expect(logged.length).toBeGreaterThan(5);
      expect(logged.map((entry) => entry.seq)).toEqual(logged.map((_entry, index) => index));
      expect(logged.map((entry) => entry.message)).toEqual(
        expect.arrayContaining(["line 1", "line 5", expect.stringMatching(/^built /)]),
      );
    } finally {
      proxy.server.closeAllConnections();
      proxy.server.close();
    }
  }, 300_000);

  test("another account's template is not found, by any call", async () => {
    const { builds } = await alice.templates.get("tooled");
    const buildId = builds[0]?.id ?? "";
    expect(await bob.templates.list()).toEqual([]);
    for (const call of [
      () => bob.templates.get("tooled"),
      () => bob.templates.getBuild("tooled", buildId),
      () => bob.templates.logs("tooled", buildId),
      () => bob.templates.follow("tooled", buildId),
      () => bob.templates.cancel("tooled", buildId),
      () => bob.templates.delete("tooled"),
    ])
      await expect(call()).rejects.toBeInstanceOf(NotFoundError);
    expect((await alice.templates.get("tooled")).name).toBe("tooled");
  });
});
