/**
 * E2B's template builder against Paddock: through E2B's stock `e2b` SDK, unmodified, an account
 * builds a template from steps (its files uploaded through signed links), follows the build's log,
 * starts sandboxes of it by its name, and deletes it; another account sees none of it. Builds
 * start from Paddock's templates (no image is pulled): E2B's `fromBaseImage()` is `e2b-base`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BuildError, type LogEntry, Sandbox, SandboxError, Template, waitForPort } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { issueUploadToken } from "../../packages/e2b/src/upload-token.js";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

/** PUTs `sent` bytes of a body said to have `length`, then drops the connection. */
async function cutOffUpload(url: URL, length: number, sent: number): Promise<void> {
  const socket = connect(Number(url.port), url.hostname);
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  socket.write(
    `PUT ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-length: ${length}\r\n\r\n`,
  );
  await new Promise((resolve) => socket.write(Buffer.alloc(sent, 1), resolve));
  // Long enough for the server to have started writing the upload.
  await new Promise((resolve) => setTimeout(resolve, 500));
  socket.destroy();
}

describe("the stock e2b SDK builds templates on Paddock", () => {
  let server: E2bServer;
  let context: string;
  let otherKey: string;
  const sandboxes: Sandbox[] = [];
  /** The E2B API as the SDK calls it, with a key (the caller's by default). */
  const e2b = (path: string, init: RequestInit = {}, key = server.env.E2B_API_KEY) =>
    fetch(`${server.env.E2B_API_URL}${path}`, {
      ...init,
      headers: { "x-api-key": key, "content-type": "application/json", ...init.headers },
    });

  beforeAll(async () => {
    // A small cap on uploads, to see one refused (the build context here is a few hundred bytes).
    server = await startE2bServer({ config: { templates: { max_build_files_bytes: 64 * 1024 } } });
    Object.assign(process.env, server.env);
    otherKey = await server.keyFor("e2b-other@example.com");
    context = mkdtempSync(join(tmpdir(), "e2b-template-context-"));
    writeFileSync(join(context, "hello.txt"), "hello from the build context\n");
  });
  afterAll(async () => {
    await Promise.all(sandboxes.map((sandbox) => sandbox.kill().catch(() => undefined)));
    await server?.dispose();
    if (context) rmSync(context, { recursive: true, force: true });
  });

  test("Template.build uploads, builds and logs; Sandbox.create starts the template by its name, for its account only", async () => {
    const template = Template({ fileContextPath: context })
      .fromBaseImage()
      .copy("hello.txt", "/app/")
      .runCmd("echo built > /app/built.txt && chown -R user /app", { user: "root" })
      .setEnvs({ GREETING: "hi there", MODE: "e2b" })
      .setWorkdir("/app")
      .setUser("user")
      .setStartCmd("python3 -m http.server 8000", waitForPort(8000));
    const logs: LogEntry[] = [];
    const built = await Template.build(template, {
      alias: "my-e2b-app",
      cpuCount: 1,
      memoryMB: 768,
      onBuildLogs: (entry) => logs.push(entry),
    });
    const log = logs.map((entry) => entry.message).join("\n");
    expect(built.templateId, log).toMatch(/^tpl[-_]/);
    expect(log).toContain("Uploaded 'hello.txt'");
    // The server's own log lines arrived, step by step, to the image it made.
    expect(log).toMatch(/step 2\/5.*RUN echo built/);
    expect(log).toMatch(/built .*MB/);

    expect(await Template.exists("my-e2b-app")).toBe(true);
    expect(await Template.exists("no-such-template")).toBe(false);
    // A built-in template's name exists, and is not the account's (E2B's 403).
    expect(await Template.exists("base")).toBe(true);
    const status = await Template.getBuildStatus(built);
    expect(status.status).toBe("ready");

    const sandbox = await Sandbox.create("my-e2b-app", { timeoutMs: 300_000 });
    sandboxes.push(sandbox);
    const { stdout } = await sandbox.commands.run(
      'cat hello.txt built.txt; echo "$GREETING/$MODE"; whoami; pwd; ls -l /app/hello.txt',
    );
    // A command without a cwd starts in the template's working directory, as on E2B.
    expect(stdout).toContain("hello from the build context\nbuilt\nhi there/e2b\nuser\n/app\n");
    // The start command serves its working directory, /app, as the template's user, once ready.
    const served = await sandbox.commands.run(
      "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8000/hello.txt').read().decode())\"; ps -o user= -C python3",
    );
    expect(served.stdout).toContain("hello from the build context");
    expect(served.stdout).toMatch(/^user\b/m);
    // E2B's SDKs also start a template by its id.
    const byId = await Sandbox.create(built.templateId, { timeoutMs: 300_000 });
    sandboxes.push(byId);
    expect((await byId.commands.run("cat hello.txt")).stdout).toContain("hello from the build context");

    // Another account: no such template to start, list, ask about or delete.
    // (E2B's SDK raises a create's 404 as a SandboxError with the status, not NotFoundError.)
    for (const name of ["my-e2b-app", built.templateId]) {
      const unknown = await Sandbox.create(name, { apiKey: otherKey }).catch((error: unknown) => error);
      expect(unknown).toBeInstanceOf(SandboxError);
      expect(unknown).toMatchObject({
        statusCode: 404,
        message: expect.stringContaining(`no template ${name}`),
      });
    }
    expect(await Template.exists("my-e2b-app", { apiKey: otherKey })).toBe(false);
    expect(await (await e2b("/templates", {}, otherKey)).json()).toEqual([]);
    const foreign = [
      await e2b(`/templates/${built.templateId}/files/${"a".repeat(64)}`, {}, otherKey),
      await e2b(`/templates/${built.templateId}/builds/${built.buildId}/status`, {}, otherKey),
      await e2b(`/templates/${built.templateId}`, { method: "DELETE" }, otherKey),
    ];
    expect(foreign.map((response) => response.status)).toEqual([404, 404, 404]);

    // Listed for its account; kept while a sandbox uses it, deleted after.
    const listed = (await (await e2b("/templates")).json()) as Array<Record<string, unknown>>;
    expect(listed).toMatchObject([
      {
        templateID: built.templateId,
        buildID: built.buildId,
        names: ["my-e2b-app"],
        buildStatus: "ready",
        cpuCount: 1,
        memoryMB: 768,
      },
    ]);
    const refused = await e2b(`/templates/${built.templateId}`, { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 409, message: expect.stringContaining("sandbox") });
    await sandbox.kill();
    await byId.kill();
    expect((await e2b(`/templates/${built.templateId}`, { method: "DELETE" })).status).toBe(204);
    expect(await Template.exists("my-e2b-app")).toBe(false);
  });

  test("a failing step fails Template.build with BuildError naming the step", async () => {
    const template = Template().fromTemplate("python").runCmd("echo first");
    template.runCmd("exit 3");
    const logs: string[] = [];
    const failed = await Template.build(template, {
      alias: "e2b-failing",
      onBuildLogs: (entry) => logs.push(entry.message),
    }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(BuildError);
    expect((failed as BuildError).message).toMatch(/step 2\/2.*exit 3.*code 3/);
    expect(logs.join("\n")).toContain("first");
    // The SDK points at the failing step's line in the caller's code, by the step number sent.
    const line = readFileSync(new URL(import.meta.url), "utf8")
      .split("\n")
      .findIndex((text) => text.includes('template.runCmd("exit 3")'));
    expect((failed as BuildError).stack).toContain(`templates.test.ts:${line + 1}`);
  });

  test("images are Paddock's templates: another image, or registry credentials, is refused", async () => {
    const pulled = Template().fromImage("registry.example.com/team/app:1").runCmd("true");
    const refused = await Template.build(pulled, "e2b-pulled").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BuildError);
    expect((refused as Error).message).toMatch(/pulls no images.*fromTemplate.*python/);
    const withCredentials = Template()
      .fromImage("python:3", { username: "someone", password: "secret" })
      .runCmd("true");
    const credentials = await Template.build(withCredentials, "e2b-credentials").catch(
      (error: unknown) => error,
    );
    expect((credentials as Error).message).toMatch(/registry credentials/);
  });

  test("upload links: only the signed, unexpired link of the account's template and hash stores files", async () => {
    const requested = await e2b("/v3/templates", {
      method: "POST",
      body: JSON.stringify({ name: "uploads:v1" }),
    });
    expect(requested.status).toBe(202);
    const { templateID, tags } = (await requested.json()) as { templateID: string; tags: string[] };
    expect(tags).toEqual(["v1"]);
    const hash = "b".repeat(64);
    const link = (await (await e2b(`/templates/${templateID}/files/${hash}`)).json()) as {
      present: boolean;
      url: string;
    };
    expect(link.present).toBe(false);
    const url = new URL(link.url);
    const token = url.searchParams.get("token") as string;
    const put = (target: URL | string) => fetch(target, { method: "PUT", body: "not really a tar" });
    const withToken = (value: string) => {
      const changed = new URL(url);
      changed.searchParams.set("token", value);
      return changed;
    };

    const tampered = `${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`;
    const otherHash = new URL(url.href.replace(hash, "c".repeat(64)));
    const accountSwapped = token.replace(/^(\d+)\.[^.]+\./, "$1.acct_someoneelse.");
    const secretKey = server.t.server.stack.secretKey;
    const accountId = token.split(".")[1] as string;
    const expired = issueUploadToken(
      secretKey,
      { accountId, templateId: templateID, hash },
      Date.now() - 3600_000,
    );
    for (const target of [
      withToken(tampered),
      withToken(accountSwapped),
      withToken(expired),
      withToken(""),
      otherHash,
    ]) {
      const response = await put(target);
      expect(response.status, target.href).toBe(401);
      expect(await response.json()).toMatchObject({
        code: 401,
        message: expect.stringContaining("upload link"),
      });
    }
    expect(await (await e2b(`/templates/${templateID}/files/${hash}`)).json()).toMatchObject({
      present: false,
    });

    // Past the size cap: 413, in E2B's shape, and nothing kept.
    const tooLarge = await fetch(url, { method: "PUT", body: Buffer.alloc(200 * 1024, 1) });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ code: 413 });
    expect(await (await e2b(`/templates/${templateID}/files/${hash}`)).json()).toMatchObject({
      present: false,
    });
    // Other routes still ask for the API key; unknown ones are E2B's 404.
    expect((await fetch(`${server.env.E2B_API_URL}/templates/${templateID}/files/${hash}`)).status).toBe(401);
    expect((await e2b("/templates/no/such/route", { method: "PUT" })).status).toBe(404);

    // A client gone mid-upload: the upload ends, and its partial file goes.
    await cutOffUpload(url, 100_000, 1000);
    const partials = () =>
      readdirSync(join(server.t.config.server.data_dir, "template-files"), { recursive: true }).filter(
        (name) => String(name).includes(".upload-"),
      );
    const deadline = Date.now() + 20_000;
    while (partials().length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(partials()).toEqual([]);

    expect((await put(url)).status).toBe(201);
    expect(await (await e2b(`/templates/${templateID}/files/${hash}`)).json()).toEqual({ present: true });
    // The same hash is another account's files: it has none.
    expect((await e2b(`/templates/${templateID}/files/${hash}`, {}, otherKey)).status).toBe(404);
  });

  test("bad input is E2B's 4xx naming the problem; a build whose steps were refused ends", async () => {
    const post = (path: string, body: unknown) => e2b(path, { method: "POST", body: JSON.stringify(body) });
    const answers: Array<[Response, number, RegExp]> = [
      [await post("/v3/templates", {}), 400, /name/],
      [await post("/v3/templates", { name: "Not A Name" }), 400, /lowercase/],
      [await post("/v3/templates", { name: "fine", cpuCount: 0 }), 400, /cpuCount/],
      [await post("/v3/templates", { name: "python" }), 409, /built-in/],
    ];
    const requested = await post("/v3/templates", { name: "bad-input" });
    const { templateID, buildID } = (await requested.json()) as { templateID: string; buildID: string };
    const build = `/v2/templates/${templateID}/builds/${buildID}`;
    answers.push(
      [await e2b(`/templates/${templateID}/files/not-a-hash`), 400, /hash/],
      [await e2b(`/templates/${templateID}/builds/${buildID}/status?logsOffset=-1`), 400, /logsOffset/],
      [await e2b(`/templates/${templateID}/builds/bld-nosuchbuild/status`), 404, /no build/],
      [await post(build, { steps: "RUN true" }), 400, /steps/],
      [await post(build, { fromTemplate: "python", steps: [{ type: "RUN", args: [] }] }), 400, /steps/],
    );
    for (const [response, status, message] of answers) {
      expect(response.status, response.url).toBe(status);
      expect(await response.json()).toMatchObject({ code: status, message: expect.stringMatching(message) });
    }
    // Refused for its steps, the build ended: it holds none of the account's builds.
    const status = (await (await e2b(`/templates/${templateID}/builds/${buildID}/status`)).json()) as {
      status: string;
    };
    expect(status.status).toBe("error");
  });
});
