/**
 * `sandbox.files` of E2B's stock `e2b` SDK, from the npm registry and unmodified, against a live
 * Paddock server (real Docker, gVisor): execd's envd `filesystem.Filesystem` service and `/files`
 * routes through the E2B gateway, with only E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY set.
 * What the SDK reports is checked against the sandbox itself through Paddock's own run API.
 */
import { createHash } from "node:crypto";
import {
  AuthenticationError,
  FileNotFoundError,
  type FilesystemEvent,
  FilesystemEventType,
  InvalidArgumentError,
  NotFoundError,
  Sandbox,
} from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

describe("the stock e2b SDK: sandbox.files", () => {
  let server: E2bServer;
  let sandbox: Sandbox;

  /** Runs a shell command in the sandbox through Paddock's API (not envd), for the ground truth. */
  const sh = async (command: string): Promise<string> => {
    const response = await fetch(`${server.t.url}/sandboxes/${sandbox.sandboxId}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.env.E2B_API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ command }),
    });
    const result = (await response.json()) as { stdout: string; stderr: string; exitCode: number };
    if (response.status !== 200 || result.exitCode !== 0)
      throw new Error(`${command}: ${response.status} ${JSON.stringify(result)}`);
    return result.stdout;
  };

  beforeAll(async () => {
    server = await startE2bServer();
    Object.assign(process.env, server.env);
    sandbox = await Sandbox.create("base", { timeoutMs: 600_000 });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("write and read text: relative paths are the default user's (user's) home", async () => {
    const written = await sandbox.files.write("hello.txt", "héllo\nworld\n");
    expect(written).toMatchObject({ path: "/home/user/hello.txt", name: "hello.txt", type: "file" });
    expect(await sandbox.files.read("hello.txt")).toBe("héllo\nworld\n");
    expect(await sandbox.files.read("/home/user/hello.txt")).toBe("héllo\nworld\n");
    expect(await sh("cat /home/user/hello.txt; stat -c '%U %a' /home/user/hello.txt")).toBe(
      "héllo\nworld\nuser 644\n",
    );
  });

  test("read bytes, blob and stream; a streamed upload; gzip both ways", async () => {
    const bytes = Uint8Array.from({ length: 1024 }, (_, index) => index % 256);
    await sandbox.files.write("/data/bytes.bin", new Blob([bytes]));
    expect(Buffer.from(await sandbox.files.read("/data/bytes.bin", { format: "bytes" }))).toEqual(
      Buffer.from(bytes),
    );
    const blob = await sandbox.files.read("/data/bytes.bin", { format: "blob" });
    expect(Buffer.from(await blob.arrayBuffer())).toEqual(Buffer.from(bytes));
    expect(await sh("sha256sum /data/bytes.bin")).toContain(createHash("sha256").update(bytes).digest("hex"));

    // 32 MiB streamed up (octet-stream) and down, chunk by chunk.
    const chunk = Buffer.alloc(1024 * 1024, "paddock\n");
    const size = 32;
    let pulls = size;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(chunk));
        if (--pulls === 0) controller.close();
      },
    });
    await sandbox.files.write("/data/big.txt", source);
    const hash = createHash("sha256");
    let received = 0;
    for await (const part of await sandbox.files.read("/data/big.txt", { format: "stream" })) {
      hash.update(part);
      received += part.length;
    }
    expect(received).toBe(size * chunk.length);
    const expected = createHash("sha256");
    for (let index = 0; index < size; index++) expected.update(chunk);
    const digest = expected.digest("hex");
    expect(hash.digest("hex")).toBe(digest);
    expect(await sh("sha256sum /data/big.txt")).toContain(digest);

    const text = "compress me ".repeat(50_000);
    await sandbox.files.write("/data/zipped.txt", text, { gzip: true });
    expect(await sandbox.files.read("/data/zipped.txt", { gzip: true })).toBe(text);
    expect(await sh("wc -c < /data/zipped.txt")).toBe(`${text.length}\n`);
  });

  test("writeFiles writes many files in one request, making their directories", async () => {
    const written = await sandbox.files.writeFiles([
      { path: "/multi/a.txt", data: "A" },
      { path: "/multi/nested/b.txt", data: new Blob(["B"]) },
      { path: "multi-relative.txt", data: new TextEncoder().encode("C").buffer },
    ]);
    expect(written).toEqual([
      expect.objectContaining({ path: "/multi/a.txt", name: "a.txt", type: "file" }),
      expect.objectContaining({ path: "/multi/nested/b.txt", name: "b.txt", type: "file" }),
      expect.objectContaining({
        path: "/home/user/multi-relative.txt",
        name: "multi-relative.txt",
        type: "file",
      }),
    ]);
    expect(await sh("cat /multi/a.txt /multi/nested/b.txt /home/user/multi-relative.txt")).toBe("ABC");
  });

  test("files written as another user are that user's, and so are the directories made for them", async () => {
    await sandbox.files.write("/shared/nobody/own.txt", "mine", { user: "nobody" });
    expect(await sh("stat -c '%U' /shared/nobody /shared/nobody/own.txt")).toBe("nobody\nnobody\n");
    expect(await sandbox.files.getInfo("/shared/nobody/own.txt")).toMatchObject({
      owner: "nobody",
      group: "nogroup",
    });
    await expect(sandbox.files.write("/x.txt", "x", { user: "ghost" })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    await expect(sandbox.files.list("/", { user: "ghost" })).rejects.toBeInstanceOf(AuthenticationError);
  });

  test("getInfo and exists describe entries as envd does", async () => {
    await sh(
      "mkdir -p /info/dir && printf 0123456789 > /info/file && chmod 640 /info/file && ln -s /info/dir /info/link",
    );
    const info = await sandbox.files.getInfo("/info/file");
    expect(info).toMatchObject({
      name: "file",
      type: "file",
      path: "/info/file",
      size: 10,
      mode: 0o640,
      permissions: "-rw-r-----",
      owner: "root",
      group: "root",
    });
    expect(info.modifiedTime).toBeInstanceOf(Date);
    expect(Math.abs((info.modifiedTime as Date).getTime() - Date.now())).toBeLessThan(120_000);
    expect(await sandbox.files.getInfo("/info/dir")).toMatchObject({
      type: "dir",
      mode: 0o755,
      permissions: "drwxr-xr-x",
    });
    expect(await sandbox.files.getInfo("/info/link")).toMatchObject({
      type: "dir",
      symlinkTarget: "/info/dir",
      permissions: "Lrwxrwxrwx",
    });
    expect(await sandbox.files.exists("/info/file")).toBe(true);
    expect(await sandbox.files.exists("/info/dir")).toBe(true);
    expect(await sandbox.files.exists("/info/missing")).toBe(false);
  });

  test("list: entries with their fields, deeper with depth", async () => {
    await sandbox.files.makeDir("/listing/a/b");
    await sandbox.files.write("/listing/a/b/leaf.txt", "leaf");
    await sandbox.files.write("/listing/top.txt", "top");
    const top = await sandbox.files.list("/listing");
    expect(top.map((entry) => [entry.name, entry.type, entry.path])).toEqual([
      ["a", "dir", "/listing/a"],
      ["top.txt", "file", "/listing/top.txt"],
    ]);
    expect(top[1]).toMatchObject({ size: 3, permissions: "-rw-r--r--", owner: "user" });
    const deep = await sandbox.files.list("/listing", { depth: 3 });
    expect(deep.map((entry) => entry.path)).toEqual([
      "/listing/a",
      "/listing/a/b",
      "/listing/a/b/leaf.txt",
      "/listing/top.txt",
    ]);
    expect((await sandbox.files.list("/listing", { depth: 2 })).map((entry) => entry.path)).toEqual([
      "/listing/a",
      "/listing/a/b",
      "/listing/top.txt",
    ]);
    await expect(sandbox.files.list("/listing/top.txt")).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  test("makeDir, rename and remove", async () => {
    expect(await sandbox.files.makeDir("/made/one/two")).toBe(true);
    expect(await sandbox.files.makeDir("/made/one/two")).toBe(false);
    expect(await sh("test -d /made/one/two && echo yes")).toBe("yes\n");
    await sandbox.files.write("/made/one/file.txt", "moving");
    const moved = await sandbox.files.rename("/made/one/file.txt", "/made/elsewhere/renamed.txt");
    expect(moved).toMatchObject({
      name: "renamed.txt",
      path: "/made/elsewhere/renamed.txt",
      type: "file",
      size: 6,
    });
    expect(await sandbox.files.exists("/made/one/file.txt")).toBe(false);
    expect(await sandbox.files.read("/made/elsewhere/renamed.txt")).toBe("moving");
    await sandbox.files.remove("/made/one");
    expect(await sandbox.files.exists("/made/one")).toBe(false);
    expect(await sh("ls /made")).toBe("elsewhere\n");
    await sandbox.files.remove("/made/never-was");
  });

  test("missing files are NotFoundError (FileNotFoundError); a directory is not readable", async () => {
    const attempts: Record<string, () => Promise<unknown>> = {
      read: () => sandbox.files.read("/nope/missing.txt"),
      "read as a stream": () => sandbox.files.read("/nope/missing.txt", { format: "stream" }),
      getInfo: () => sandbox.files.getInfo("/nope/missing.txt"),
      list: () => sandbox.files.list("/nope"),
      rename: () => sandbox.files.rename("/nope/missing.txt", "/nope/other.txt"),
      watchDir: () => sandbox.files.watchDir("/nope", () => undefined),
    };
    for (const [call, attempt] of Object.entries(attempts)) {
      const error = await attempt().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error, call).toBeInstanceOf(FileNotFoundError);
      expect(error, call).toBeInstanceOf(NotFoundError);
    }
    await expect(sandbox.files.read("/root")).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  test("watchDir: create, write, rename and remove events, from the SDK and the sandbox's own processes", async () => {
    await sandbox.files.makeDir("/watched");
    const events: FilesystemEvent[] = [];
    const seen = () => events.map((event) => `${event.type} ${event.name}`);
    const handle = await sandbox.files.watchDir("/watched", (event) => void events.push(event));
    try {
      await sandbox.files.write("/watched/sdk.txt", "one");
      await expect.poll(seen).toContain(`${FilesystemEventType.WRITE} sdk.txt`);
      expect(seen()).toContain(`${FilesystemEventType.CREATE} sdk.txt`);
      await sh(
        "echo process > /watched/proc.txt && mv /watched/proc.txt /watched/moved.txt && rm /watched/sdk.txt",
      );
      await expect.poll(seen).toContain(`${FilesystemEventType.REMOVE} sdk.txt`);
      expect(seen()).toEqual(
        expect.arrayContaining([
          `${FilesystemEventType.CREATE} proc.txt`,
          `${FilesystemEventType.RENAME} proc.txt`,
          `${FilesystemEventType.CREATE} moved.txt`,
        ]),
      );
      await sh("chmod 600 /watched/moved.txt");
      await expect.poll(seen).toContain(`${FilesystemEventType.CHMOD} moved.txt`);
    } finally {
      await handle.stop();
    }
  });

  test("watchDir recursive: events from directories below, made before and after the watch began", async () => {
    await sandbox.files.makeDir("/tree/existing");
    const events: FilesystemEvent[] = [];
    const seen = () => events.map((event) => `${event.type} ${event.name}`);
    const handle = await sandbox.files.watchDir("/tree", (event) => void events.push(event), {
      recursive: true,
    });
    try {
      await sandbox.files.write("/tree/existing/a.txt", "a");
      await expect.poll(seen).toContain(`${FilesystemEventType.WRITE} existing/a.txt`);
      await sandbox.files.makeDir("/tree/later");
      await expect.poll(seen).toContain(`${FilesystemEventType.CREATE} later`);
      await sandbox.files.write("/tree/later/b.txt", "b");
      await expect.poll(seen).toContain(`${FilesystemEventType.WRITE} later/b.txt`);
      await sandbox.files.remove("/tree/later");
      await expect.poll(seen).toContain(`${FilesystemEventType.REMOVE} later`);
      expect(seen()).toContain(`${FilesystemEventType.REMOVE} later/b.txt`);
    } finally {
      await handle.stop();
    }
    // Not recursive: nothing from below.
    const shallow: FilesystemEvent[] = [];
    const top = await sandbox.files.watchDir("/tree", (event) => void shallow.push(event));
    try {
      await sandbox.files.write("/tree/existing/deep.txt", "deep");
      await sandbox.files.write("/tree/top.txt", "top");
      await expect.poll(() => shallow.map((event) => event.name)).toContain("top.txt");
      expect(shallow.map((event) => event.name)).not.toContain("existing/deep.txt");
    } finally {
      await top.stop();
    }
  });

  test("text that is not Unicode: the SDK's RPCs are InvalidArgumentError, envd's /files a 400 in its shape", async () => {
    const lone = "/tmp/\ud800";
    const outcomes = [];
    for (const call of [
      () => sandbox.files.list(lone),
      () => sandbox.files.getInfo(lone),
      () => sandbox.files.makeDir(lone),
      () => sandbox.files.rename("/tmp", lone),
      () => sandbox.files.remove(lone),
    ])
      outcomes.push(await call().then(String, (error: Error) => error.constructor.name));
    expect(outcomes).toEqual(outcomes.map(() => "InvalidArgumentError"));
    const detail = await fetch(`${server.env.E2B_API_URL}/sandboxes/${sandbox.sandboxId}`, {
      headers: { "x-api-key": server.env.E2B_API_KEY },
    });
    const { envdAccessToken } = (await detail.json()) as { envdAccessToken: string };
    const envd = {
      "E2b-Sandbox-Id": sandbox.sandboxId,
      "E2b-Sandbox-Port": "49983",
      "X-Access-Token": envdAccessToken,
    };
    const answers = [];
    for (const [method, query] of [
      ["GET", "path=%FF"],
      ["GET", "path=%2Ftmp%2F%ED%A0%80"],
      ["POST", "path=%FF"],
    ]) {
      const response = await fetch(`${server.env.E2B_SANDBOX_URL}/files?${query}`, {
        method,
        headers: envd,
        ...(method === "POST" ? { body: new FormData() } : {}),
      });
      answers.push([method, query, response.status, ((await response.json()) as { code: unknown }).code]);
    }
    expect(answers).toEqual(answers.map(([method, query]) => [method, query, 400, 400]));
    // Nothing was made under the replacement character U+FFFD either.
    expect(await sh("ls /tmp")).not.toContain("\ufffd");
  });
});
