/**
 * What E2B's stock SDKs (`e2b` 2.51, `@e2b/code-interpreter` 2.8, unmodified) turn on by the envd
 * version a sandbox reports (0.6.4): file metadata (0.6.2), watch events with their entry (0.6.3),
 * watches that allow network mounts (0.6.4); and getMetrics over a time window. Against a live
 * Paddock server under gVisor and under runc, with only E2B_API_URL, E2B_SANDBOX_URL and
 * E2B_API_KEY set. (A directory on a network filesystem, which no test sandbox has, is covered by
 * packages/execd/src/envd/file-metadata.test.ts.)
 */
import { Sandbox as CodeInterpreter } from "@e2b/code-interpreter";
import { type FilesystemEvent, Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";

describe.each(["gvisor", "runc"] as const)("the stock E2B SDKs and envd 0.6.4 under %s", (runtime) => {
  let server: E2bServer;
  let sandbox: Sandbox;

  /** Runs a shell command in the sandbox through Paddock's API (not envd), as root. */
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
    server = await startE2bServer({
      config: { secure_runtime: { type: runtime === "runc" ? "" : "gvisor" } },
    });
    Object.assign(process.env, server.env);
    sandbox = await Sandbox.create("base", { timeoutMs: 600_000 });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  test("file metadata: set on write, answered by getInfo and list, kept by renames, replaced by overwrites", async () => {
    const metadata = { author: "ada", purpose: "report" };
    const written = await sandbox.files.write("meta/a.txt", "one", { metadata });
    expect(written.metadata).toEqual(metadata);
    const path = written.path;
    expect((await sandbox.files.getInfo(path)).metadata).toEqual(metadata);
    expect(
      (await sandbox.files.write("meta/b.txt", "two", { metadata, useOctetStream: true })).metadata,
    ).toEqual(metadata);
    await sandbox.files.write("meta/plain.txt", "none");
    const listed = await sandbox.files.list("meta");
    expect(listed.map((entry) => [entry.name, entry.metadata])).toEqual([
      ["a.txt", metadata],
      ["b.txt", metadata],
      ["plain.txt", undefined],
    ]);
    const many = await sandbox.files.writeFiles(
      [
        { path: "meta/many/1.txt", data: "1" },
        { path: "meta/many/2.txt", data: "2" },
      ],
      { metadata: { batch: "7" } },
    );
    expect(many.map((entry) => entry.metadata)).toEqual([{ batch: "7" }, { batch: "7" }]);
    expect(
      (await sandbox.files.list("meta", { depth: 2 })).find((e) => e.name === "2.txt")?.metadata,
    ).toEqual({
      batch: "7",
    });

    // Renamed, and moved with its directory.
    expect((await sandbox.files.rename("meta/a.txt", "meta/renamed.txt")).metadata).toEqual(metadata);
    await sandbox.files.rename("meta", "moved");
    expect((await sandbox.files.getInfo("moved/renamed.txt")).metadata).toEqual(metadata);
    expect((await sandbox.files.getInfo("moved/many/1.txt")).metadata).toEqual({ batch: "7" });
    // The sandbox's own programs see the file, unchanged by its metadata.
    expect(await sh(`cat ${path.replace("/meta/a.txt", "/moved/renamed.txt")}`)).toBe("one");

    // An overwrite replaces the metadata; one without metadata clears it.
    await sandbox.files.write("moved/renamed.txt", "1", { metadata: { author: "grace" } });
    expect((await sandbox.files.getInfo("moved/renamed.txt")).metadata).toEqual({ author: "grace" });
    expect((await sandbox.files.write("moved/renamed.txt", "2")).metadata).toBeUndefined();
    expect((await sandbox.files.getInfo("moved/renamed.txt")).metadata).toBeUndefined();

    // Removed: a new file at the same path starts without metadata, whatever inode it gets.
    await sandbox.files.write("moved/b.txt", "again", { metadata: { round: "1" } });
    await sandbox.files.remove("moved");
    await sandbox.files.write("moved/b.txt", "fresh");
    expect((await sandbox.files.getInfo("moved/b.txt")).metadata).toBeUndefined();
  });

  test("@e2b/code-interpreter's sandbox handle reads and writes the same metadata", async () => {
    await sandbox.files.write("shared.txt", "s", { metadata: { from: "e2b" } });
    const interpreter = await CodeInterpreter.connect(sandbox.sandboxId);
    expect((await interpreter.files.getInfo("shared.txt")).metadata).toEqual({ from: "e2b" });
    await interpreter.files.write("shared.txt", "t", { metadata: { from: "code-interpreter" } });
    expect((await sandbox.files.getInfo("shared.txt")).metadata).toEqual({ from: "code-interpreter" });
  });

  test("watchDir({ includeEntry }) carries each event's entry, metadata included", async () => {
    await sandbox.files.makeDir("watched");
    const root = (await sandbox.files.getInfo("watched")).path;
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir(root, (event) => void events.push(event), {
      includeEntry: true,
    });
    try {
      await sandbox.files.write("watched/w.txt", "12345", { metadata: { seen: "yes" } });
      await expect
        .poll(() => events.find((event) => event.type === "write" && event.entry?.size === 5), {
          timeout: 15_000,
        })
        .toMatchObject({ name: "w.txt", entry: { name: "w.txt", type: "file", path: `${root}/w.txt` } });
      // A change by the sandbox's own program, after the metadata was set.
      await sh(`chmod 600 ${root}/w.txt`);
      await expect
        // (The write itself gives the file to the calling user: a chmod event before this one.)
        .poll(() => events.find((event) => event.type === "chmod" && event.entry?.mode === 0o600), {
          timeout: 15_000,
        })
        .toMatchObject({ name: "w.txt", entry: { mode: 0o600, metadata: { seen: "yes" } } });
      await sh(`rm ${root}/w.txt`);
      await expect
        .poll(() => events.find((event) => event.type === "remove"), { timeout: 15_000 })
        .toBeDefined();
      // What is gone has no entry.
      expect(events.find((event) => event.type === "remove")?.entry).toBeUndefined();
    } finally {
      await handle.stop();
    }
  });

  test("watchDir({ allowNetworkMounts }) watches as any watch does", async () => {
    await sandbox.files.makeDir("mounts");
    const root = (await sandbox.files.getInfo("mounts")).path;
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir(root, (event) => void events.push(event), {
      allowNetworkMounts: true,
      recursive: true,
    });
    try {
      await sh(`mkdir ${root}/d && echo x > ${root}/d/f.txt`);
      await expect
        .poll(() => events.map((event) => `${event.type} ${event.name}`), { timeout: 15_000 })
        .toContain("create d/f.txt");
    } finally {
      await handle.stop();
    }
  });

  test("getMetrics({ start, end }) answers only the samples inside the window", async () => {
    const now = Date.now();
    const started = (await sandbox.getInfo()).startedAt.getTime();
    // Before the sandbox existed.
    expect(
      await sandbox.getMetrics({ start: new Date(started - 3_600_000), end: new Date(started - 60_000) }),
    ).toEqual([]);
    // Still to come.
    expect(
      await sandbox.getMetrics({ start: new Date(now + 3_600_000), end: new Date(now + 7_200_000) }),
    ).toEqual([]);
    // Around now: the sample taken now, inside the window.
    const around = await sandbox.getMetrics({ start: new Date(now - 60_000), end: new Date(now + 60_000) });
    expect(around).toHaveLength(1);
    const at = around[0]?.timestamp.getTime() ?? 0;
    expect(at).toBeGreaterThanOrEqual(now - 60_000);
    expect(at).toBeLessThanOrEqual(now + 60_000);
    expect(around[0]?.memTotal).toBeGreaterThan(0);
    // No window: from the sandbox's start to now.
    expect(await sandbox.getMetrics()).toHaveLength(1);
    // A window that ends before it starts is a bad request.
    await expect(
      Sandbox.getMetrics(sandbox.sandboxId, { start: new Date(now), end: new Date(now - 60_000) }),
    ).rejects.toThrow(/start .* is after end/);
  });
});
