import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CliUser, errorLine, paddockBin } from "./user-cli.js";

interface SandboxJson {
  id: string;
  state: string;
  template: string | null;
  metadata: Record<string, string>;
  expiresAt: string | null;
}

async function sha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

describe("paddock sandbox, exec and cp", () => {
  let t: TestServer;
  let user: CliUser;
  let sandbox: SandboxJson;

  beforeAll(async () => {
    t = await startTestServer();
    user = new CliUser(t.url);
    await user.signUp("sandboxes");
    expect((await user.run(["secrets", "set", "GREETING", "hello from a secret"])).status).toBe(0);
    sandbox = await user.json<SandboxJson>([
      "sandbox",
      "create",
      "--template",
      "python",
      "--timeout",
      "600",
      "--env",
      "COLOUR=teal",
      "--env",
      "EQUATION=a=b",
      "--metadata",
      "suite=cli",
      "--secret",
      "GREETING",
      "--secret",
      "GREETING=HELLO",
    ]);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("create --json prints the sandbox; get, list and the readable forms agree", async () => {
    expect(sandbox).toMatchObject({ state: "Running", template: "python", metadata: { suite: "cli" } });
    expect(sandbox.id).toMatch(/^sbx/);
    expect(sandbox.expiresAt).not.toBeNull();
    // The exec and cp calls that follow (and this test's own) move its last use; the rest stands.
    const {
      lastActivityAt: _used,
      idleAt: _idles,
      ...unmoved
    } = sandbox as SandboxJson & Record<string, unknown>;
    expect(await user.json(["sandbox", "get", sandbox.id])).toMatchObject(unmoved);
    const listed = await user.json<SandboxJson[]>(["sandbox", "list"]);
    expect(listed.map((item) => item.id)).toEqual([sandbox.id]);
    expect(await user.json<SandboxJson[]>(["sandbox", "list", "--state", "Paused"])).toEqual([]);
    const table = await user.run(["sandbox", "list"]);
    expect(table.stdout).toMatch(
      new RegExp(`^ID +STATE +TEMPLATE +CREATED +EXPIRES +IDLES AT\\n${sandbox.id} +Running +python `),
    );
    const record = await user.run(["sandbox", "get", sandbox.id]);
    expect(record.stdout).toMatch(/^id: +sbx.*\nstate: +Running\ntemplate: +python\n/);
    expect(record.stdout).toContain("suite=cli");
    expect(await user.run(["sandbox", "list", "-q"])).toMatchObject({ status: 0, stdout: `${sandbox.id}\n` });
    const quiet = await user.run(["sandbox", "create", "-q"]);
    expect(quiet.stdout).toMatch(/^sbx\S+\n$/);
    expect((await user.run(["sandbox", "kill", quiet.stdout.trim()])).status).toBe(0);
    expect(sandbox).toHaveProperty("createdAt");
  });

  test("exec: arguments quoted as docker exec passes them, env, secrets, cwd, exit codes", async () => {
    const printed = await user.run(["exec", sandbox.id, "--", "printf", "%s\\n", "a b", "$COLOUR", "it's"]);
    expect(printed).toEqual({ status: 0, stdout: "a b\n$COLOUR\nit's\n", stderr: "" });
    const environment = await user.run([
      "exec",
      sandbox.id,
      "--",
      "sh",
      "-c",
      'echo "$COLOUR $EQUATION $GREETING/$HELLO"',
    ]);
    expect(environment.stdout).toBe("teal a=b hello from a secret/hello from a secret\n");
    const placed = await user.run([
      "exec",
      sandbox.id,
      "--cwd",
      "/tmp",
      "--env",
      "WHO=me",
      "--",
      "sh",
      "-c",
      'echo "$PWD $WHO"',
    ]);
    expect(placed.stdout).toBe("/tmp me\n");
    const failed = await user.run(["exec", sandbox.id, "--", "sh", "-c", "echo out; echo err >&2; exit 42"]);
    expect(failed).toEqual({ status: 42, stdout: "out\n", stderr: "err\n" });
    expect((await user.run(["exec", sandbox.id, "--", "false"])).status).toBe(1);
    const withoutSeparator = await user.run(["exec", sandbox.id, "ls", "-la"]);
    expect(withoutSeparator.status).toBe(2);
    expect(withoutSeparator.stderr).toMatch(errorLine("usage"));
  });

  test("exec streams output live: the first line arrives while the command still runs", async () => {
    const child = spawn(
      process.execPath,
      [paddockBin, "exec", sandbox.id, "--", "sh", "-c", "echo first; sleep 3; echo second"],
      { env: user.environment() },
    );
    const arrivals: Array<{ text: string; at: number }> = [];
    child.stdout.on("data", (chunk: Buffer) => arrivals.push({ text: chunk.toString(), at: Date.now() }));
    const status = await new Promise((resolve) => child.once("close", resolve));
    const ended = Date.now();
    expect(status).toBe(0);
    expect(arrivals.map((arrival) => arrival.text).join("")).toBe("first\nsecond\n");
    expect(arrivals[0]?.text).toBe("first\n");
    expect(ended - (arrivals[0]?.at ?? ended)).toBeGreaterThan(2000);
  });

  test("cp: 100 MiB up and down, byte for byte, and into directories as docker cp does", async () => {
    const local = join(user.home, "random.bin");
    writeFileSync(local, randomBytes(100 * 2 ** 20));
    const digest = await sha256(local);
    const up = await user.run(["cp", local, `${sandbox.id}:/tmp/uploads/`]);
    expect(up).toEqual({ status: 0, stdout: "", stderr: "" }); // no bar: stderr is not a terminal
    const inSandbox = await user.run(["exec", sandbox.id, "--", "sha256sum", "/tmp/uploads/random.bin"]);
    expect(inSandbox.stdout.split(" ")[0]).toBe(digest);

    const back = join(user.home, "back.bin");
    expect((await user.run(["cp", `${sandbox.id}:/tmp/uploads/random.bin`, back])).status).toBe(0);
    expect(await sha256(back)).toBe(digest);
    // A local directory as the destination receives the file under its own name.
    const downloads = join(user.home, "downloads");
    mkdirSync(downloads);
    expect((await user.run(["cp", `${sandbox.id}:/tmp/uploads/random.bin`, downloads])).status).toBe(0);
    expect(await sha256(join(downloads, "random.bin"))).toBe(digest);
  });

  test("cp: stdin and stdout, a mode kept, and whole directories both ways", async () => {
    const piped = await user.run(["cp", "-", `${sandbox.id}:/tmp/piped.txt`], { input: "through a pipe\n" });
    expect(piped.status).toBe(0);
    expect((await user.run(["cp", `${sandbox.id}:/tmp/piped.txt`, "-"])).stdout).toBe("through a pipe\n");

    const script = join(user.home, "run.sh");
    writeFileSync(script, "#!/bin/sh\necho ran\n", { mode: 0o755 });
    expect((await user.run(["cp", script, `${sandbox.id}:/tmp/run.sh`])).status).toBe(0);
    expect((await user.run(["exec", sandbox.id, "--", "/tmp/run.sh"])).stdout).toBe("ran\n");

    const tree = join(user.home, "tree");
    mkdirSync(join(tree, "nested"), { recursive: true });
    writeFileSync(join(tree, "top.txt"), "top\n");
    writeFileSync(join(tree, "nested", "deep.bin"), Buffer.from([0, 1, 2, 255]));
    // Into a directory that exists: the copy lands inside it, under its own name.
    expect((await user.run(["cp", tree, `${sandbox.id}:/tmp`])).status).toBe(0);
    const listing = await user.run([
      "exec",
      sandbox.id,
      "--",
      "sh",
      "-c",
      "cd /tmp/tree && find . -type f | sort && od -An -tu1 nested/deep.bin",
    ]);
    expect(listing.stdout.replace(/\s+/g, " ").trim()).toBe("./nested/deep.bin ./top.txt 0 1 2 255");
    // To a path that does not exist: the copy is that path.
    expect((await user.run(["cp", tree, `${sandbox.id}:/tmp/renamed`])).status).toBe(0);
    expect((await user.run(["exec", sandbox.id, "--", "cat", "/tmp/renamed/top.txt"])).stdout).toBe("top\n");

    const fetched = join(user.home, "fetched");
    expect((await user.run(["cp", `${sandbox.id}:/tmp/renamed`, fetched])).status).toBe(0);
    expect(readFileSync(join(fetched, "top.txt"), "utf8")).toBe("top\n");
    expect([...readFileSync(join(fetched, "nested", "deep.bin"))]).toEqual([0, 1, 2, 255]);
    expect((await user.run(["cp", `${sandbox.id}:/tmp/renamed`, fetched])).status).toBe(0);
    expect(statSync(join(fetched, "renamed", "nested", "deep.bin")).size).toBe(4);
    // The archives that carried them are gone from the sandbox.
    expect(
      (await user.run(["exec", sandbox.id, "--", "sh", "-c", "ls -a /tmp | grep -c paddock-cp"])).stdout,
    ).toBe("0\n");
  });

  test("errors: one line with the code, for a missing file on either side, an unknown sandbox and a wrong key", async () => {
    const missingRemote = await user.run(["cp", `${sandbox.id}:/tmp/absent.txt`, join(user.home, "x")]);
    expect(missingRemote.status).toBe(1);
    expect(missingRemote.stderr).toMatch(errorLine("file_not_found"));
    const missingLocal = await user.run(["cp", join(user.home, "absent.txt"), `${sandbox.id}:/tmp/`]);
    expect(missingLocal.status).toBe(1);
    expect(missingLocal.stderr).toMatch(errorLine("file_not_found"));
    const bothLocal = await user.run(["cp", "a", "b"]);
    expect(bothLocal.status).toBe(2);
    expect(bothLocal.stderr).toMatch(errorLine("usage"));

    for (const args of [
      ["sandbox", "get", "sbx-unknown"],
      ["sandbox", "kill", "sbx-unknown"],
      ["exec", "sbx-unknown", "--", "true"],
      ["cp", "-", "sbx-unknown:/tmp/x"],
    ]) {
      const unknown = await user.run(args, { input: "" });
      expect([args, unknown.status, unknown.stdout]).toEqual([args, 1, ""]);
      expect(unknown.stderr).toMatch(errorLine("sandbox_not_found"));
    }
    const wrongKey = await user.run(["exec", sandbox.id, "--", "true"], {
      env: { PADDOCK_API_KEY: "pk_wrong" },
    });
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toMatch(errorLine("unauthorized"));
  });

  test("pause, resume, renew and kill; an exec whose sandbox is killed ends at once with the server's code", async () => {
    // Without resume on use, a command on a paused sandbox is refused until it is resumed.
    const other = await user.json<SandboxJson>(["sandbox", "create", "--no-auto-resume"]);
    expect(other.expiresAt).toBeNull();
    expect(await user.json(["sandbox", "pause", other.id])).toMatchObject({ id: other.id, state: "Paused" });
    const paused = await user.run(["exec", other.id, "--", "true"]);
    expect(paused.status).toBe(1);
    expect(paused.stderr).toMatch(errorLine("invalid_state"));
    expect(await user.json(["sandbox", "resume", other.id])).toMatchObject({ state: "Running" });
    const renewed = await user.json<SandboxJson>(["sandbox", "renew", other.id, "--timeout", "3600"]);
    const lifetime = Date.parse(renewed.expiresAt as string) - Date.now();
    expect(lifetime).toBeGreaterThan(3500_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);
    const noTimeout = await user.run(["sandbox", "renew", other.id]);
    expect(noTimeout.status).toBe(2);

    const child = spawn(
      process.execPath,
      [paddockBin, "exec", other.id, "--", "sh", "-c", "echo started; sleep 600"],
      {
        env: user.environment(),
      },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    const status = new Promise((resolve) => child.once("close", resolve));
    await new Promise<void>((resolve) =>
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk;
        if (stdout.includes("started")) resolve();
      }),
    );
    const killedAt = Date.now();
    expect((await user.run(["sandbox", "kill", other.id])).stdout).toBe(`Killed ${other.id}\n`);
    expect(await status).toBe(1);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(stdout).toBe("started\n");
    expect(stderr).toMatch(/^paddock: \S.* \([a-z_]+\)\n$/);
    expect(stderr).not.toContain("connection_failed");
    const gone = await user.run(["sandbox", "get", other.id]);
    expect(gone.stderr).toMatch(errorLine("sandbox_not_found"));
  });
});
