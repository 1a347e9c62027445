import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { Parser, type ReadEntry } from "tar";
import { afterEach, describe, expect, test } from "vitest";
import { packDirectory } from "./context-archive.js";
import { InvalidRequestError } from "./errors.js";

/** A directory holding `files` (path → content). */
function directoryOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "paddock-context-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(root, name, ".."), { recursive: true });
    writeFileSync(join(root, name), content);
  }
  return root;
}

/** The entries of a packed archive: name → type, with the contents of files. */
async function entriesOf(archive: AsyncIterable<Uint8Array>): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  const parser = new Parser({
    onReadEntry: (entry: ReadEntry) => {
      const name = entry.path.replace(/^\.\//, "").replace(/\/$/, "");
      const chunks: Buffer[] = [];
      entry.on("data", (chunk: Buffer) => chunks.push(chunk));
      entry.on("end", () => {
        entries[name || "."] =
          entry.type === "File" ? `file:${Buffer.concat(chunks)}` : `${entry.type}:${entry.linkpath ?? ""}`;
      });
    },
  });
  await new Promise((resolve, reject) => {
    Readable.from(archive).pipe(parser).on("end", resolve).on("error", reject);
  });
  return entries;
}

describe("packing a build context", () => {
  const made: string[] = [];
  const directory = (files: Record<string, string>) => {
    const root = directoryOf(files);
    made.push(root);
    return root;
  };
  afterEach(() => {
    for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  test("leaves out what .dockerignore names, with Docker's rules and `!` exceptions", async () => {
    const root = directory({
      Dockerfile: "FROM ubuntu",
      ".dockerignore": "# secrets\n/secret.env\n*.log\nbuild/\n!build/keep.txt\n",
      "secret.env": "TOKEN=1",
      "app.log": "noise",
      "sub/deep.log": "a root pattern does not reach here",
      "build/out.bin": "built",
      "build/keep.txt": "kept",
      "src/main.sh": "echo hi",
    });
    const entries = await entriesOf(await packDirectory(root, ["Dockerfile", ".dockerignore"]));
    expect(
      Object.keys(entries)
        .filter((name) => entries[name]?.startsWith("file:"))
        .sort(),
    ).toEqual([".dockerignore", "Dockerfile", "build/keep.txt", "src/main.sh", "sub/deep.log"]);
    expect(entries["src/main.sh"]).toBe("file:echo hi");
  });

  test("keeps the Dockerfile even when .dockerignore names it or its directory", async () => {
    const root = directory({
      "docker/Dockerfile": "FROM ubuntu",
      "docker/notes.txt": "left out",
      ".dockerignore": "docker\n",
    });
    const entries = await entriesOf(await packDirectory(root, ["docker/Dockerfile"]));
    expect(entries["docker/Dockerfile"]).toBe("file:FROM ubuntu");
    expect(entries).not.toHaveProperty("docker/notes.txt");
  });

  test("sends a hard link's second name as a file and a symlink as a link, never its target", async () => {
    const root = directory({ "a.txt": "same bytes" });
    const outside = directory({ "private.txt": "not for the server" });
    linkSync(join(root, "a.txt"), join(root, "b.txt"));
    symlinkSync(join(outside, "private.txt"), join(root, "link"));
    const entries = await entriesOf(await packDirectory(root));
    expect(entries["a.txt"]).toBe("file:same bytes");
    expect(entries["b.txt"]).toBe("file:same bytes");
    expect(entries.link).toBe(`SymbolicLink:${join(outside, "private.txt")}`);
    expect(JSON.stringify(entries)).not.toContain("not for the server");
  });

  test("a path that is not a directory is refused before anything is sent", async () => {
    const root = directory({ "file.txt": "x" });
    await expect(packDirectory(join(root, "file.txt"))).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(packDirectory(join(root, "missing"))).rejects.toThrow(/is not a directory/);
  });
});
