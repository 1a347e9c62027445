/**
 * envd's filesystem (Connect `filesystem.Filesystem` and `/files`) served by an in-process execd,
 * driven by E2B's stock SDK. The SDK cannot send execd's token, so a small proxy adds it, as the
 * server's gateway does. The end-to-end suite (test/e2b/files.test.ts) covers the same through
 * Paddock's server and a gVisor sandbox.
 */
import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileNotFoundError, type FilesystemEvent, InvalidArgumentError, type Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startEnvd, testToken as token } from "../testing.js";

describe("envd filesystem through E2B's SDK", () => {
  let envd: Awaited<ReturnType<typeof startEnvd>>;
  let sandbox: Sandbox;
  let dir: string;
  let base: string;

  beforeAll(async () => {
    envd = await startEnvd();
    ({ sandbox, base } = envd);
    dir = await mkdtemp(join(tmpdir(), "envd-files-"));
  });
  afterAll(async () => {
    envd?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("health answers 204 (isRunning)", async () => {
    expect(await sandbox.isRunning()).toBe(true);
  });

  test("write and read text, bytes, blobs and streams", async () => {
    const path = join(dir, "notes", "hello.txt");
    const info = await sandbox.files.write(path, "hello\nworld\n");
    expect(info).toMatchObject({ path, name: "hello.txt", type: "file" });
    expect(await readFile(path, "utf8")).toBe("hello\nworld\n");
    expect(await sandbox.files.read(path)).toBe("hello\nworld\n");
    const bytes = Uint8Array.from({ length: 300_000 }, (_, index) => index % 251);
    await sandbox.files.write(join(dir, "bytes.bin"), bytes.buffer);
    expect(Buffer.from(await sandbox.files.read(join(dir, "bytes.bin"), { format: "bytes" }))).toEqual(
      Buffer.from(bytes),
    );
    const blob = await sandbox.files.read(path, { format: "blob" });
    expect(await blob.text()).toBe("hello\nworld\n");
    const stream = await sandbox.files.read(join(dir, "bytes.bin"), { format: "stream" });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(bytes));
    expect(
      await sandbox.files.read(join(dir, "empty"), { format: "bytes" }).catch((error) => error),
    ).toBeInstanceOf(FileNotFoundError);
    await sandbox.files.write(join(dir, "empty"), "");
    expect(await sandbox.files.read(join(dir, "empty"))).toBe("");
  });

  test("streamed and gzip uploads and gzip downloads", async () => {
    const text = "compressible ".repeat(10_000);
    const path = join(dir, "gz", "file.txt");
    await sandbox.files.write(path, text, { gzip: true });
    expect(await readFile(path, "utf8")).toBe(text);
    expect(await sandbox.files.read(path, { gzip: true })).toBe(text);
    const streamed = join(dir, "streamed.txt");
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let part = 0; part < 5; part++) controller.enqueue(new TextEncoder().encode(`part ${part}\n`));
        controller.close();
      },
    });
    await sandbox.files.write(streamed, body);
    expect(await readFile(streamed, "utf8")).toBe("part 0\npart 1\npart 2\npart 3\npart 4\n");
    const raw = await fetch(`${base}/files?path=${encodeURIComponent(path)}`, {
      headers: { "accept-encoding": "gzip", "x-execd-access-token": token },
    });
    expect(raw.headers.get("content-encoding")).toBe("gzip");
    expect(await raw.text()).toBe(text);
  });

  test("writeFiles writes many in one request, paths with quotes and newlines intact", async () => {
    const written = await sandbox.files.writeFiles([
      { path: join(dir, "many", "a.txt"), data: "A" },
      { path: join(dir, "many", 'quo"te\nd.txt'), data: new Blob(["B"]) },
      { path: join(dir, "many", "deep", "c.txt"), data: "C" },
    ]);
    expect(written.map((entry) => entry.name)).toEqual(["a.txt", 'quo"te\nd.txt', "c.txt"]);
    expect(await readFile(join(dir, "many", 'quo"te\nd.txt'), "utf8")).toBe("B");
    expect(await readFile(join(dir, "many", "deep", "c.txt"), "utf8")).toBe("C");
  });

  test("a file is written as the user named, in directories it owns", async () => {
    const path = join(dir, "owned", "by", "nobody.txt");
    await sandbox.files.write(path, "mine", { user: "nobody" });
    const owner = (await stat(path)).uid;
    expect(owner).toBe((await stat(join(dir, "owned", "by"))).uid);
    expect(owner).not.toBe(0);
    expect((await sandbox.files.getInfo(path)).owner).toBe("nobody");
    await expect(sandbox.files.write(join(dir, "x"), "x", { user: "no-such-user" })).rejects.toThrow(
      /invalid username/,
    );
    await expect(sandbox.files.list(dir, { user: "no-such-user" })).rejects.toThrow(/invalid username/);
  });

  test("getInfo, exists, list with depth, makeDir, rename, remove", async () => {
    const root = join(dir, "tree");
    expect(await sandbox.files.makeDir(join(root, "a", "b"))).toBe(true);
    expect(await sandbox.files.makeDir(join(root, "a", "b"))).toBe(false);
    await sandbox.files.write(join(root, "a", "b", "leaf.txt"), "leaf");
    await sandbox.files.write(join(root, "top.txt"), "0123456789");
    await chmod(join(root, "top.txt"), 0o640);
    await symlink(join(root, "a"), join(root, "link"));

    const info = await sandbox.files.getInfo(join(root, "top.txt"));
    expect(info).toMatchObject({
      name: "top.txt",
      type: "file",
      path: join(root, "top.txt"),
      size: 10,
      mode: 0o640,
      permissions: "-rw-r-----",
      owner: "root",
      group: "root",
    });
    expect(Math.abs((info.modifiedTime as Date).getTime() - Date.now())).toBeLessThan(60_000);
    expect(await sandbox.files.getInfo(join(root, "a"))).toMatchObject({
      type: "dir",
      permissions: "drwxr-xr-x",
    });
    expect(await sandbox.files.getInfo(join(root, "link"))).toMatchObject({
      type: "dir",
      symlinkTarget: join(root, "a"),
      permissions: "Lrwxrwxrwx",
    });
    expect(await sandbox.files.exists(join(root, "top.txt"))).toBe(true);
    expect(await sandbox.files.exists(join(root, "nope"))).toBe(false);
    await expect(sandbox.files.getInfo(join(root, "nope"))).rejects.toBeInstanceOf(FileNotFoundError);

    const names = (entries: Array<{ path: string }>) =>
      entries.map((entry) => entry.path.slice(root.length + 1));
    expect(names(await sandbox.files.list(root))).toEqual(["a", "link", "top.txt"]);
    expect(names(await sandbox.files.list(root, { depth: 3 }))).toEqual([
      "a",
      "a/b",
      "a/b/leaf.txt",
      "link",
      "top.txt",
    ]);
    expect(names(await sandbox.files.list(join(root, "link")))).toEqual(["link/b"]);
    await expect(sandbox.files.list(join(root, "top.txt"))).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sandbox.files.list(join(root, "missing"))).rejects.toBeInstanceOf(FileNotFoundError);

    const moved = await sandbox.files.rename(join(root, "top.txt"), join(root, "new", "place.txt"));
    expect(moved).toMatchObject({ name: "place.txt", path: join(root, "new", "place.txt"), type: "file" });
    await expect(sandbox.files.rename(join(root, "top.txt"), join(root, "x"))).rejects.toBeInstanceOf(
      FileNotFoundError,
    );
    await sandbox.files.remove(join(root, "a"));
    await sandbox.files.remove(join(root, "never-was"));
    expect(await sandbox.files.exists(join(root, "a"))).toBe(false);
    await expect(sandbox.files.read(root)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  test("watchDir streams create, write and remove events, recursively", async () => {
    const root = join(dir, "watched");
    await sandbox.files.makeDir(join(root, "sub"));
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir(root, (event) => void events.push(event), {
      recursive: true,
    });
    try {
      await sandbox.files.write(join(root, "sub", "f.txt"), "one");
      await sandbox.files.write(join(root, "sub", "f.txt"), "two");
      await sandbox.files.remove(join(root, "sub", "f.txt"));
      const seen = () => events.map((event) => `${event.type} ${event.name}`);
      await expect.poll(seen).toContain("remove sub/f.txt");
      expect(seen()).toContain("create sub/f.txt");
      expect(seen()).toContain("write sub/f.txt");
    } finally {
      await handle.stop();
    }
    await expect(sandbox.files.watchDir(join(root, "missing"), () => undefined)).rejects.toBeInstanceOf(
      FileNotFoundError,
    );
  });

  test("polling watchers: create, poll, remove; unknown ids are not_found", async () => {
    const call = async (method: string, body: object) => {
      const response = await fetch(`${base}/filesystem.Filesystem/${method}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    const root = join(dir, "polled");
    await sandbox.files.makeDir(root);
    const created = await call("CreateWatcher", { path: root, recursive: true });
    expect(created.status).toBe(200);
    const watcherId = created.body.watcherId as string;
    await writeFile(join(root, "p.txt"), "x");
    await expect
      .poll(async () => (await call("GetWatcherEvents", { watcherId })).body.events ?? [], { interval: 50 })
      .toContainEqual({ name: "p.txt", type: "EVENT_TYPE_CREATE" });
    expect((await call("RemoveWatcher", { watcherId })).status).toBe(200);
    expect(await call("GetWatcherEvents", { watcherId })).toMatchObject({
      status: 404,
      body: { code: "not_found" },
    });
    expect(await call("RemoveWatcher", { watcherId })).toMatchObject({ status: 404 });
  });

  test("bad input gets clear errors", async () => {
    const rpc = (method: string, body: string) =>
      fetch(`${base}/filesystem.Filesystem/${method}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }).then(async (response) => [response.status, await response.json()]);
    expect(await rpc("Stat", '{"path": 5}')).toEqual([
      400,
      { code: "invalid_argument", message: "path must be a string" },
    ]);
    expect(await rpc("ListDir", '{"path": "/", "depth": -1}')).toMatchObject([
      400,
      { code: "invalid_argument" },
    ]);
    expect(await rpc("Remove", '{"path": "/"}')).toMatchObject([400, { code: "invalid_argument" }]);
    await writeFile(join(dir, "plain"), "x");
    expect(await rpc("MakeDir", JSON.stringify({ path: join(dir, "plain", "below") }))).toMatchObject([
      400,
      { code: "invalid_argument", message: `path is a file: ${join(dir, "plain")}` },
    ]);

    const http = (path: string, init?: RequestInit) =>
      fetch(`${base}${path}`, init).then(async (response) => [response.status, await response.json()]);
    expect(await http(`/files?path=${encodeURIComponent(join(dir, "missing"))}`)).toEqual([
      404,
      { code: 404, message: `path '${join(dir, "missing")}' does not exist` },
    ]);
    expect(await http(`/files?path=${encodeURIComponent(dir)}`)).toMatchObject([400, { code: 400 }]);
    expect(await http("/files?username=ghost&path=x")).toMatchObject([
      401,
      { message: "invalid username: 'ghost'" },
    ]);
    const octet = { "content-type": "application/octet-stream" };
    expect(await http("/files", { method: "POST", headers: octet, body: "x" })).toMatchObject([
      400,
      { code: 400 },
    ]);
    expect(
      await http(`/files?path=${encodeURIComponent(join(dir, "z"))}`, {
        method: "POST",
        headers: { ...octet, "content-encoding": "gzip" },
        body: "not gzip",
      }),
    ).toMatchObject([400, { message: expect.stringContaining("gzip body is corrupt") }]);
    expect(
      await http("/files?path=x", { method: "POST", headers: { "content-type": "text/plain" }, body: "x" }),
    ).toMatchObject([400, { message: expect.stringContaining("unsupported content type") }]);
    expect(
      await http(`/files?path=${encodeURIComponent(dir)}`, { method: "POST", headers: octet, body: "x" }),
    ).toMatchObject([400, { message: `path is a directory: ${dir}` }]);
  });

  test("a WatchDir stream sends keepalives at the asked interval, and its watch ends with the client", async () => {
    const root = join(dir, "kept");
    await sandbox.files.makeDir(join(root, "sub"));
    const watches = () => process.getActiveResourcesInfo().filter((name) => name === "FSEventWrap").length;
    const before = watches();
    const message = Buffer.from(JSON.stringify({ path: root, recursive: true }));
    const envelope = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
    const controller = new AbortController();
    const response = await fetch(`${base}/filesystem.Filesystem/WatchDir`, {
      method: "POST",
      headers: { "content-type": "application/connect+json", "keepalive-ping-interval": "1" },
      body: envelope,
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const received: unknown[] = [];
    let buffered = Buffer.alloc(0);
    while (received.length < 2) {
      const { value } = await reader.read();
      buffered = Buffer.concat([buffered, value ?? Buffer.alloc(0)]);
      while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
        const length = buffered.readUInt32BE(1);
        received.push(JSON.parse(buffered.subarray(5, 5 + length).toString()));
        buffered = buffered.subarray(5 + length);
      }
    }
    expect(received).toEqual([{ start: {} }, { keepalive: {} }]);
    expect(watches()).toBe(before + 2);
    controller.abort();
    await expect.poll(watches).toBe(before);
  });
});
