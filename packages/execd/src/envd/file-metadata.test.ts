/**
 * envd's file metadata (envd 0.6.2), watch entries (0.6.3) and network mounts (0.6.4), served by
 * an in-process execd and driven by E2B's stock SDK; the end-to-end suite
 * (test/e2b/envd-features.test.ts) covers the same through Paddock's server under gVisor and runc.
 */
import type { Stats } from "node:fs";
import { chmod, link, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FilesystemEvent, InvalidArgumentError, type Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { startEnvd } from "../testing.js";
import { FileMetadataStore } from "./file-metadata.js";

/** Directories this suite's statfs reports as NFS: no network filesystem is mounted on a test machine. */
const nfsDirectories = new Set<string>();
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...actual,
    statfs: async (path: string) => {
      const answer = await actual.statfs(path);
      return nfsDirectories.has(path) ? { ...answer, type: 0x6969 } : answer;
    },
  };
});

describe("envd 0.6.x features through E2B's SDK", () => {
  let envd: Awaited<ReturnType<typeof startEnvd>>;
  let sandbox: Sandbox;
  let dir: string;
  let storePath: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "envd-metadata-"));
    storePath = join(dir, "state", "file-metadata.jsonl");
    envd = await startEnvd({ fileMetadataPath: storePath });
    sandbox = envd.sandbox;
  });
  afterAll(async () => {
    envd?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("metadata set on write (multipart and octet-stream) is answered by write, getInfo and list", async () => {
    const metadata = { author: "ada", purpose: "upload" };
    const path = join(dir, "files", "a.txt");
    const written = await sandbox.files.write(path, "one", { metadata });
    expect(written).toMatchObject({ path, metadata });
    expect((await sandbox.files.getInfo(path)).metadata).toEqual(metadata);
    const streamed = join(dir, "files", "b.txt");
    expect(await sandbox.files.write(streamed, "two", { metadata, useOctetStream: true })).toMatchObject({
      metadata,
    });
    expect((await sandbox.files.getInfo(streamed)).metadata).toEqual(metadata);
    // Keys are lowercased, as envd keeps them.
    await sandbox.files.write(join(dir, "files", "c.txt"), "three", { metadata: { Mixed: "Case" } });
    const listed = await sandbox.files.list(join(dir, "files"));
    expect(listed.map((entry) => [entry.name, entry.metadata])).toEqual([
      ["a.txt", metadata],
      ["b.txt", metadata],
      ["c.txt", { mixed: "Case" }],
    ]);
    const many = await sandbox.files.writeFiles(
      [
        { path: join(dir, "many", "1.txt"), data: "1" },
        { path: join(dir, "many", "2.txt"), data: "2" },
      ],
      { metadata: { batch: "yes" } },
    );
    expect(many.map((entry) => entry.metadata)).toEqual([{ batch: "yes" }, { batch: "yes" }]);
    const deep = await sandbox.files.list(dir, { depth: 2 });
    expect(deep.find((entry) => entry.name === "2.txt")?.metadata).toEqual({ batch: "yes" });
    expect(deep.find((entry) => entry.name === "many")?.metadata).toBeUndefined();
  });

  test("renames keep metadata, overwrites replace it, removals end it", async () => {
    const path = join(dir, "moves", "doc.txt");
    await sandbox.files.write(path, "x", { metadata: { stage: "draft" } });
    const renamed = await sandbox.files.rename(path, join(dir, "moves", "final.txt"));
    expect(renamed.metadata).toEqual({ stage: "draft" });
    // A directory moved with the file in it.
    await sandbox.files.rename(join(dir, "moves"), join(dir, "moved"));
    const moved = join(dir, "moved", "final.txt");
    expect((await sandbox.files.getInfo(moved)).metadata).toEqual({ stage: "draft" });
    // Overwritten without metadata: none left; with other metadata: only that.
    await sandbox.files.write(moved, "y", { metadata: { stage: "final", extra: "1" } });
    await sandbox.files.write(moved, "z", { metadata: { stage: "done" } });
    expect((await sandbox.files.getInfo(moved)).metadata).toEqual({ stage: "done" });
    expect((await sandbox.files.write(moved, "w")).metadata).toBeUndefined();
    expect((await sandbox.files.getInfo(moved)).metadata).toBeUndefined();
    // Removed, then a new file at the same path (the filesystem may give it the same inode).
    await sandbox.files.write(moved, "v", { metadata: { stage: "old" } });
    await sandbox.files.remove(join(dir, "moved"));
    await sandbox.files.write(moved, "new");
    expect((await sandbox.files.getInfo(moved)).metadata).toBeUndefined();
    // A program's own rename and hard link keep the inode, and so its metadata (where the filesystem has birth times).
    const own = join(dir, "own.txt");
    await sandbox.files.write(own, "o", { metadata: { by: "sdk" } });
    if ((await stat(own)).birthtimeMs > 0) {
      await rename(own, join(dir, "own-renamed.txt"));
      await link(join(dir, "own-renamed.txt"), join(dir, "own-linked.txt"));
      expect((await sandbox.files.getInfo(join(dir, "own-renamed.txt"))).metadata).toEqual({ by: "sdk" });
      expect((await sandbox.files.getInfo(join(dir, "own-linked.txt"))).metadata).toEqual({ by: "sdk" });
    }
  });

  test("metadata outlives execd: a new execd reads it from the store", async () => {
    const path = join(dir, "kept.txt");
    await sandbox.files.write(path, "k", { metadata: { kept: "yes" } });
    const again = await startEnvd({ fileMetadataPath: storePath });
    try {
      expect((await again.sandbox.files.getInfo(path)).metadata).toEqual({ kept: "yes" });
    } finally {
      again.close();
    }
  });

  test("bad metadata is a 400 before anything is written", async () => {
    const upload = (headers: Record<string, string>) =>
      fetch(`${envd.base}/files?path=${encodeURIComponent(join(dir, "bad.txt"))}`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream", ...headers },
        body: "bad",
      }).then(async (response) => [response.status, await response.json()]);
    expect(await upload({ [`x-metadata-${"k".repeat(247)}`]: "v" })).toEqual([
      400,
      { code: 400, message: expect.stringContaining("longer than 246 bytes") },
    ]);
    expect(await upload({ "x-metadata-big": "v".repeat(4096) })).toEqual([
      400,
      { code: 400, message: expect.stringContaining("limited to 4096 bytes") },
    ]);
    await expect(stat(join(dir, "bad.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    // The SDK turns envd's 400 into an InvalidArgumentError.
    await expect(
      sandbox.files.write(join(dir, "bad.txt"), "x", { metadata: { ["k".repeat(300)]: "v" } }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  test("watchDir({ includeEntry }) and polling watchers carry the entry, metadata included", async () => {
    const root = join(dir, "watched");
    await mkdir(root);
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir(root, (event) => void events.push(event), {
      includeEntry: true,
    });
    const watcher = await fetch(`${envd.base}/filesystem.Filesystem/CreateWatcher`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: root, includeEntry: true }),
    }).then((response) => response.json() as Promise<{ watcherId: string }>);
    try {
      await sandbox.files.write(join(root, "e.txt"), "12345", { metadata: { seen: "yes" } });
      await expect
        .poll(() => events.find((event) => event.type === "write" && event.entry?.size === 5))
        .toMatchObject({ name: "e.txt", entry: { name: "e.txt", type: "file", path: join(root, "e.txt") } });
      // The metadata is set once the file is written: the events after that carry it.
      await chmod(join(root, "e.txt"), 0o600);
      await expect
        .poll(() => events.find((event) => event.type === "chmod"))
        .toMatchObject({ name: "e.txt", entry: { mode: 0o600, metadata: { seen: "yes" } } });
      const polled = await fetch(`${envd.base}/filesystem.Filesystem/GetWatcherEvents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ watcherId: watcher.watcherId }),
      }).then((response) => response.json() as Promise<{ events: Record<string, any>[] }>);
      // A polled event describes its entry as it is when polled.
      expect(polled.events.find((event) => event.type === "EVENT_TYPE_CREATE")).toMatchObject({
        name: "e.txt",
        entry: { name: "e.txt", type: "FILE_TYPE_FILE", metadata: { seen: "yes" } },
      });
      await sandbox.files.remove(join(root, "e.txt"));
      await expect.poll(() => events.find((event) => event.type === "remove")).toBeDefined();
      expect(events.find((event) => event.type === "remove")?.entry).toBeUndefined();
    } finally {
      await handle.stop();
    }
  });

  test("a directory on a network filesystem is watched only with allowNetworkMounts", async () => {
    const root = join(dir, "nfs");
    await mkdir(root);
    nfsDirectories.add(root);
    await expect(sandbox.files.watchDir(root, () => undefined)).rejects.toThrow(
      expect.objectContaining({
        name: "InvalidArgumentError",
        message: expect.stringContaining("network filesystem (NFS)"),
      }),
    );
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir(root, (event) => void events.push(event), {
      allowNetworkMounts: true,
    });
    try {
      await writeFile(join(root, "n.txt"), "n");
      await expect.poll(() => events.map((event) => `${event.type} ${event.name}`)).toContain("create n.txt");
    } finally {
      await handle.stop();
    }
    // A local directory needs no permission.
    const local = await sandbox.files.watchDir(dir, () => undefined);
    await local.stop();
  });
});

describe("the metadata store", () => {
  const stats = (dev: number, ino: number, birthtimeMs: number) => ({ dev, ino, birthtimeMs }) as Stats;

  test("without birth times (gVisor) an entry holds only at the path envd last put its file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "envd-metadata-store-"));
    try {
      const file = join(dir, "store.jsonl");
      await writeFile(
        file,
        [
          JSON.stringify({ set: "7:42", path: "/home/user/a.txt", birth: 0, metadata: { k: "a" } }),
          "not json",
          JSON.stringify({ set: "7:43", path: "/home/user/b.txt", birth: 0, metadata: { k: "b" } }),
          JSON.stringify({ move: "7:43", path: "/home/user/c.txt" }),
          "",
        ].join("\n"),
      );
      const store = new FileMetadataStore(file);
      expect(await store.get("/home/user/a.txt", stats(7, 42, 0))).toEqual({ k: "a" });
      // The same inode number at another path: a new file where the old one was deleted.
      expect(await store.get("/home/user/other.txt", stats(7, 42, 0))).toBeUndefined();
      expect(await store.get("/home/user/c.txt", stats(7, 43, 0))).toEqual({ k: "b" });
      expect(await store.get("/home/user/b.txt", stats(7, 43, 0))).toBeUndefined();
      await store.removed("/home/user");
      expect(await store.get("/home/user/a.txt", stats(7, 42, 0))).toBeUndefined();
      expect(await new FileMetadataStore(file).get("/home/user/c.txt", stats(7, 43, 0))).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("with birth times an entry follows its inode anywhere, and a reused inode number is a new file", async () => {
    const store = new FileMetadataStore();
    const dir = await mkdtemp(join(tmpdir(), "envd-metadata-store-"));
    try {
      const path = join(dir, "f.txt");
      await writeFile(path, "f");
      await store.set(path, { k: "v" });
      const real = await stat(path);
      expect(await store.get("/elsewhere", real)).toEqual(real.birthtimeMs > 0 ? { k: "v" } : undefined);
      expect(await store.get(path, { ...real, birthtimeMs: real.birthtimeMs + 1 } as Stats)).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("bounded: past its limit the files deleted by other programs are forgotten, then writes are refused", async () => {
    const dir = await mkdtemp(join(tmpdir(), "envd-metadata-store-"));
    try {
      const store = new FileMetadataStore(undefined, { files: 3, bytes: 1_000_000 });
      const files = await Promise.all(
        [1, 2, 3, 4].map(async (n) => {
          const path = join(dir, `${n}.txt`);
          await writeFile(path, String(n));
          return path;
        }),
      );
      for (const path of files.slice(0, 3)) await store.set(path, { n: "1" });
      await expect(store.set(files[3] as string, { n: "1" })).rejects.toMatchObject({
        code: "resource_exhausted",
      });
      // Replacing a known file's metadata needs no room.
      await store.set(files[0] as string, { n: "2" });
      await rm(files[1] as string);
      await store.set(files[3] as string, { n: "1" });
      expect(await store.get(files[3] as string, await stat(files[3] as string))).toEqual({ n: "1" });
      const small = new FileMetadataStore(undefined, { files: 10, bytes: 200 });
      await expect(small.set(files[0] as string, { big: "x".repeat(300) })).rejects.toMatchObject({
        code: "resource_exhausted",
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a write through envd replaces an entry another file left at its path; the log is compacted", async () => {
    const dir = await mkdtemp(join(tmpdir(), "envd-metadata-store-"));
    try {
      const path = join(dir, "f.txt");
      await writeFile(path, "f");
      const log = join(dir, "store.jsonl");
      await writeFile(log, `${JSON.stringify({ set: "9:1", path, birth: 0, metadata: { old: "1" } })}\n`);
      const store = new FileMetadataStore(log);
      expect(await store.get(path, stats(9, 1, 0))).toEqual({ old: "1" });
      await store.set(path, {});
      expect(await store.get(path, stats(9, 1, 0))).toBeUndefined();
      for (let round = 0; round <= 1500; round++) await store.set(path, round % 2 ? {} : { round: "even" });
      const lines = (await readFile(log, "utf8")).trim().split("\n").length;
      expect(lines).toBeLessThan(1100);
      expect(await new FileMetadataStore(log).get(path, await stat(path))).toEqual({ round: "even" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
