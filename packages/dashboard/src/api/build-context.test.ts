import { createTar } from "nanotar";
import { describe, expect, test } from "vitest";
import { buildContext } from "./build-context";

interface Header {
  name: string;
  mode: number;
  type: string;
  content: string;
}

/** The entries of a tar.gz, read from their headers by hand (not by the library that wrote them). */
async function entriesOf(archive: Blob): Promise<Header[]> {
  const tar = new Uint8Array(
    await new Response(archive.stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
  );
  const text = (from: number, length: number) =>
    new TextDecoder().decode(tar.subarray(from, from + length)).replace(/\0.*$/s, "");
  const entries: Header[] = [];
  for (let offset = 0; offset + 512 <= tar.length && tar[offset] !== 0; ) {
    const size = Number.parseInt(text(offset + 124, 12), 8);
    entries.push({
      name: text(offset, 100),
      mode: Number.parseInt(text(offset + 100, 8), 8),
      type: text(offset + 156, 1),
      content: new TextDecoder().decode(tar.subarray(offset + 512, offset + 512 + size)),
    });
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

const file = (name: string, content: string | Uint8Array) => new File([content as BlobPart], name);

describe("buildContext", () => {
  test("the Dockerfile written beside chosen files; an archive unpacked with its modes; an empty file stays a file", async () => {
    const archive = createTar([
      { name: "tools/run.sh", data: "#!/bin/sh\necho ran\n", attrs: { mode: "755" } },
      { name: "tools/empty", data: new Uint8Array(0) },
      { name: "Dockerfile", data: "FROM node" },
    ]);
    const context = await buildContext("FROM ubuntu\nCOPY . /srv/", [
      file("greeting.txt", "hello\n"),
      file("tools.tar", archive),
    ]);
    const entries = await entriesOf(context);
    const byName = Object.fromEntries(entries.map((entry) => [entry.name, entry]));
    expect(Object.keys(byName).sort()).toEqual(["Dockerfile", "greeting.txt", "tools/empty", "tools/run.sh"]);
    // The Dockerfile written on the page wins over the archive's.
    expect(byName.Dockerfile?.content).toBe("FROM ubuntu\nCOPY . /srv/");
    expect(byName["greeting.txt"]?.content).toBe("hello\n");
    expect(byName["tools/run.sh"]).toMatchObject({
      type: "0",
      mode: 0o755,
      content: "#!/bin/sh\necho ran\n",
    });
    expect(byName["tools/empty"]).toMatchObject({ type: "0", content: "" });
  });

  test("with nothing written, a chosen archive's Dockerfile is the build's", async () => {
    const gzipped = await new Response(
      new Blob([createTar([{ name: "./Dockerfile", data: "FROM python" }]) as BlobPart])
        .stream()
        .pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer();
    const entries = await entriesOf(
      await buildContext("  \n", [file("context.tar.gz", new Uint8Array(gzipped))]),
    );
    expect(entries).toEqual([
      { name: "Dockerfile", mode: expect.any(Number), type: "0", content: "FROM python" },
    ]);
  });

  test("refuses a context without a Dockerfile, a name too long for a tar header, and an unreadable archive", async () => {
    await expect(buildContext("", [file("notes.txt", "x")])).rejects.toThrow(/Write a Dockerfile/);
    await expect(buildContext("FROM ubuntu", [file(`${"a".repeat(101)}.txt`, "x")])).rejects.toThrow(
      /longer than 100 bytes/,
    );
    await expect(buildContext("FROM ubuntu", [file("broken.tar.gz", "not gzip at all")])).rejects.toThrow(
      /broken\.tar\.gz is not a readable tar\.gz archive/,
    );
  });
});
