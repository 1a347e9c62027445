import { describe, expect, test } from "vitest";
import { type ExecdClient, sandboxPerSuite } from "./client.js";

function multipart(
  files: Array<{ metadata: Record<string, unknown>; content: Uint8Array | string }>,
): FormData {
  const form = new FormData();
  for (const file of files) {
    form.append("metadata", new Blob([JSON.stringify(file.metadata)], { type: "application/json" }));
    form.append("file", new Blob([file.content], { type: "application/octet-stream" }), "upload");
  }
  return form;
}

describe.each(["gvisor", "runc"] as const)("execd files, directories and metrics under %s", (secure) => {
  let execd: ExecdClient;
  sandboxPerSuite(
    secure,
    {
      image: { uri: "paddock/base:bookworm" },
      resourceLimits: { cpu: "500m" },
    },
    (made) => {
      execd = made;
    },
  );

  test("upload, download (whole, ranged, by lines) and info", async () => {
    const binary = new Uint8Array(256 * 1024).map((_, i) => (i * 7) % 256);
    const uploaded = await execd.fetch("/files/upload", {
      method: "POST",
      body: multipart([
        { metadata: { path: "/work/data.bin", mode: 640 }, content: binary },
        { metadata: { path: "/work/notes.txt", mode: 644 }, content: "one\ntwo\nthree\nfour\n" },
      ]),
    });
    expect(uploaded.status).toBe(200);

    const whole = await execd.fetch("/files/download?path=/work/data.bin");
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-length")).toBe(String(binary.length));
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(binary);

    const part = await execd.fetch("/files/download?path=/work/data.bin", {
      headers: { Range: "bytes=100-199" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 100-199/${binary.length}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(binary.slice(100, 200));
    const suffix = await execd.fetch("/files/download?path=/work/data.bin", {
      headers: { Range: "bytes=-10" },
    });
    expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(binary.slice(-10));
    const outside = await execd.fetch("/files/download?path=/work/data.bin", {
      headers: { Range: "bytes=999999-" },
    });
    expect(outside.status).toBe(416);
    // Line reads join lines with "\n" and end without one, as OpenSandbox's execd answers them.
    const byLines = (query: string) => execd.fetch(`/files/download?path=/work/notes.txt&${query}`);
    expect(await (await byLines("offset=2&limit=2")).text()).toBe("two\nthree");
    expect(await (await byLines("offset=4")).text()).toBe("four");
    expect(await (await byLines("offset=9")).text()).toBe("");

    const info = await execd.json("/files/info?path=/work/data.bin&path=/work/notes.txt");
    expect(info["/work/data.bin"]).toMatchObject({
      type: "file",
      size: binary.length,
      mode: 640,
      owner: "root",
      group: "root",
    });
    expect(info["/work/notes.txt"]).toMatchObject({ mode: 644 });
    expect((await execd.fetch("/files/info?path=/nope")).status).toBe(404);
  });

  test("permissions, move, search, replace and delete", async () => {
    expect(
      (
        await execd.fetch("/files/permissions", {
          method: "POST",
          body: JSON.stringify({ "/work/notes.txt": { mode: 600, owner: "nobody", group: "nogroup" } }),
        })
      ).status,
    ).toBe(200);
    expect((await execd.json("/files/info?path=/work/notes.txt"))["/work/notes.txt"]).toMatchObject({
      mode: 600,
      owner: "nobody",
      group: "nogroup",
    });
    expect(
      (
        await execd.fetch("/files/permissions", {
          method: "POST",
          body: JSON.stringify({ "/work/notes.txt": { mode: 999 } }),
        })
      ).status,
    ).toBe(400);

    expect(
      (
        await execd.fetch("/files/mv", {
          method: "POST",
          body: JSON.stringify([{ src: "/work/notes.txt", dest: "/work/renamed.md" }]),
        })
      ).status,
    ).toBe(200);
    const found = await execd.json("/files/search?path=/work&pattern=*.md");
    expect(found.map((entry: { path: string }) => entry.path)).toEqual(["/work/renamed.md"]);
    const alternatives = await execd.json(
      `/files/search?path=/work&pattern=${encodeURIComponent("{*.md,data*}")}`,
    );
    expect(alternatives.map((entry: { path: string }) => entry.path)).toEqual([
      "/work/data.bin",
      "/work/renamed.md",
    ]);
    expect(
      (await execd.fetch(`/files/search?path=/work&pattern=${encodeURIComponent("[z-a]")}`)).status,
    ).toBe(400);
    const everything = await execd.json("/files/search?path=/work");
    expect(everything.map((entry: { path: string }) => entry.path).sort()).toEqual([
      "/work/data.bin",
      "/work/renamed.md",
    ]);

    const replaced = await execd.json("/files/replace?verbose=true", {
      method: "POST",
      body: JSON.stringify({ "/work/renamed.md": { old: "two", new: "2" } }),
    });
    expect(replaced).toEqual({ "/work/renamed.md": { replacedCount: 1 } });
    expect(await (await execd.fetch("/files/download?path=/work/renamed.md")).text()).toBe(
      "one\n2\nthree\nfour\n",
    );
    expect((await execd.json("/files/info?path=/work/renamed.md"))["/work/renamed.md"].mode).toBe(600);

    expect((await execd.fetch("/files?path=/work/renamed.md", { method: "DELETE" })).status).toBe(200);
    expect((await execd.fetch("/files/info?path=/work/renamed.md")).status).toBe(404);
    expect((await execd.fetch("/files?path=/work", { method: "DELETE" })).status).toBe(400);
  });

  test("directories: mkdir -p with a mode, list with depth, recursive delete", async () => {
    expect(
      (
        await execd.fetch("/directories", {
          method: "POST",
          body: JSON.stringify({ "/tree/a/b": { mode: 700 } }),
        })
      ).status,
    ).toBe(200);
    await execd.run("touch /tree/top.txt /tree/a/mid.txt /tree/a/b/deep.txt");
    const shallow = await execd.json("/directories/list?path=/tree");
    expect(shallow.map((entry: { path: string }) => entry.path)).toEqual(["/tree/a", "/tree/top.txt"]);
    const deep = await execd.json("/directories/list?path=/tree&depth=3");
    expect(deep.map((entry: { path: string }) => entry.path)).toEqual([
      "/tree/a",
      "/tree/a/b",
      "/tree/a/b/deep.txt",
      "/tree/a/mid.txt",
      "/tree/top.txt",
    ]);
    expect(deep[1]).toMatchObject({ type: "directory", mode: 700 });
    expect((await execd.fetch("/directories?path=/tree", { method: "DELETE" })).status).toBe(200);
    expect((await execd.fetch("/directories/list?path=/tree")).status).toBe(404);
    expect((await execd.fetch("/directories/list?path=/tree&depth=0")).status).toBe(400);
  });

  test("a 1 GiB file goes up and down with execd's memory bounded", async () => {
    const size = 1024 * 1024 * 1024;
    const chunk = new Uint8Array(1024 * 1024).fill(97);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const head = `--b\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"path":"/big/file"}\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n`;
        controller.enqueue(new TextEncoder().encode(head));
      },
      pull(controller) {
        if (sent < size) {
          controller.enqueue(chunk);
          sent += chunk.length;
        } else {
          controller.enqueue(new TextEncoder().encode("\r\n--b--\r\n"));
          controller.close();
        }
      },
    });
    const upload = await execd.fetch("/files/upload", {
      method: "POST",
      body,
      headers: { "content-type": "multipart/form-data; boundary=b" },
      duplex: "half",
    } as RequestInit);
    expect(upload.status).toBe(200);
    expect((await execd.json("/files/info?path=/big/file"))["/big/file"].size).toBe(size);
    const download = await execd.fetch("/files/download?path=/big/file");
    let received = 0;
    for await (const part of download.body as unknown as AsyncIterable<Uint8Array>) received += part.length;
    expect(received).toBe(size);
    const rss = await execd.rssKib();
    expect(rss).toBeGreaterThan(10 * 1024); // a real Node process, not the probe itself
    expect(rss).toBeLessThan(200 * 1024);
    await execd.run("rm -rf /big");
  }, 300_000); // a gigabyte through gVisor's file I/O, while other suites share the two cores

  test("a NUL byte in a path or a command is a 400 on every route that takes one", async () => {
    const nul = "%00";
    const json = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });
    const cases: Array<[string, RequestInit]> = [
      [`/files/info?path=/tmp/a${nul}b`, {}],
      [`/files/download?path=/tmp/a${nul}b`, {}],
      [`/files/search?path=/tmp${nul}&pattern=*`, {}],
      [`/directories/list?path=/tmp${nul}`, {}],
      [`/files?path=/tmp/a${nul}b`, { method: "DELETE" }],
      [`/directories?path=/tmp/a${nul}b`, { method: "DELETE" }],
      ["/directories", json({ "/tmp/a\u0000b": { mode: 755 } })],
      ["/files/mv", json([{ src: "/tmp/a\u0000b", dest: "/tmp/c" }])],
      ["/files/permissions", json({ "/tmp/a\u0000b": { mode: 644 } })],
      [
        "/files/upload",
        { method: "POST", body: multipart([{ metadata: { path: "/tmp/a\u0000b" }, content: "x" }]) },
      ],
      ["/command", json({ command: "echo a\u0000b" })],
      ["/command", json({ command: "true", cwd: "/tmp\u0000" })],
    ];
    for (const [path, init] of cases) {
      const response = await execd.fetch(path, init);
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
      expect(await response.json()).toMatchObject({ code: "invalid_request", message: expect.any(String) });
    }
    expect((await execd.run("echo still-here")).stdout).toBe("still-here\n");
  });

  test("an upload refused at its metadata leaves the connection ready for the next request", async () => {
    // The refusal comes before the file part is read: the rest of the body must be read away, or
    // the kept-alive connection waits on it until the server's header timeout (60 s).
    for (const size of [0, 64 * 1024, 1024 * 1024]) {
      const refused = await execd.fetch("/files/upload", {
        method: "POST",
        body: multipart([{ metadata: { path: "relative/path" }, content: new Uint8Array(size) }]),
      });
      expect(refused.status).toBe(400);
      await refused.text();
      const next = await execd.fetch("/files/info?path=/tmp", { signal: AbortSignal.timeout(15_000) });
      expect(next.status).toBe(200);
      await next.text();
    }
  });

  test("metrics describe the sandbox, once and as a stream", async () => {
    const metrics = await execd.json("/metrics");
    expect(metrics).toMatchObject({
      // The sandbox's limit: gVisor shows its guests at least two CPUs and no quota.
      cpu_count: 0.5,
      mem_total_mib: expect.any(Number),
      timestamp: expect.any(Number),
    });
    expect(metrics.mem_used_mib).toBeGreaterThan(0);
    // The sandbox's limit (1Gi by default), not the host's memory.
    expect(metrics.mem_total_mib).toBeLessThanOrEqual(1024);
    const controller = new AbortController();
    const stream = await execd.fetch("/metrics/watch", { signal: controller.signal });
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while ((text.match(/data:/g) ?? []).length < 2)
      text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text).toContain('"cpu_used_pct"');
  });
});
