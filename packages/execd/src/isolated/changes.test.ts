import { execFileSync } from "node:child_process";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Change, commitChanges, diffTar, type OverlayViews, overlayChanges } from "./changes.js";

/**
 * Three plain directories laid out as overlayfs would show them (no mount needed): the lower
 * workspace, the upper directory a session wrote, and the merged view it saw.
 */
function layout(root: string): OverlayViews {
  const views = { lower: join(root, "lower"), upper: join(root, "upper"), merged: join(root, "merged") };
  const files = (base: string, entries: Record<string, string | null>) => {
    for (const [path, content] of Object.entries(entries)) {
      const full = join(base, path);
      if (content === null) mkdirSync(full, { recursive: true });
      else {
        mkdirSync(join(full, ".."), { recursive: true });
        writeFileSync(full, content);
      }
    }
  };
  files(views.lower, {
    "keep.txt": "keep\n",
    "change.txt": "before\n",
    "gone.txt": "bye\n",
    "gone-dir/inner.txt": "inner\n",
    "remade/old.txt": "old\n",
    "was-file": "file\n",
    "was-dir/x": "x\n",
  });
  // The session changed change.txt, deleted gone.txt and gone-dir, removed and remade `remade`
  // with new content, turned was-file into a directory and was-dir into a file, added a file
  // under a long path and a symlink.
  const long = `${"d".repeat(60)}/${"e".repeat(60)}/file.txt`;
  files(views.upper, {
    "change.txt": "after\n",
    "remade/new.txt": "new\n",
    "was-file/child.txt": "child\n",
    "was-dir": "now a file\n",
    [long]: "long\n",
  });
  symlinkSync("keep.txt", join(views.upper, "link"));
  chmodSync(join(views.upper, "change.txt"), 0o640);
  files(views.merged, {
    "keep.txt": "keep\n",
    "change.txt": "after\n",
    "remade/new.txt": "new\n",
    "was-file/child.txt": "child\n",
    "was-dir": "now a file\n",
    [long]: "long\n",
  });
  symlinkSync("keep.txt", join(views.merged, "link"));
  return views;
}

describe("a session's changes", () => {
  let root: string;
  let views: OverlayViews;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "paddock-changes-"));
    views = layout(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  test("are listed parents first, deletions found by comparing lower and merged", async () => {
    const changes: Change[] = [];
    for await (const change of overlayChanges(views)) changes.push(change);
    const described = changes.map((change) => `${change.kind} ${change.path}`);
    expect(described).toEqual([
      "deleted gone-dir",
      "deleted gone.txt",
      "file change.txt",
      `directory ${"d".repeat(60)}`,
      `directory ${"d".repeat(60)}/${"e".repeat(60)}`,
      `file ${"d".repeat(60)}/${"e".repeat(60)}/file.txt`,
      "symlink link",
      "directory remade",
      "deleted remade/old.txt",
      "file remade/new.txt",
      "file was-dir",
      "directory was-file",
      "file was-file/child.txt",
    ]);
  });

  test("diff is a tar GNU tar reads: long names, symlinks, modes and whiteouts", async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of Readable.from(diffTar(views))) chunks.push(chunk as Buffer);
    const archive = Buffer.concat(chunks);
    expect(archive.length % 512).toBe(0);
    const listing = execFileSync("tar", ["-tvf", "-"], { input: archive, encoding: "utf8" });
    expect(listing).toMatch(/-rw-r-----.* change\.txt\n/);
    expect(listing).toMatch(/link -> keep\.txt/);
    const out = join(root, "out");
    mkdirSync(out);
    execFileSync("tar", ["-xf", "-", "-C", out], { input: archive });
    expect(readdirSync(out).sort()).toEqual(
      [
        ".wh.gone-dir",
        ".wh.gone.txt",
        "change.txt",
        "d".repeat(60),
        "link",
        "remade",
        "was-dir",
        "was-file",
      ].sort(),
    );
    expect(readdirSync(join(out, "remade")).sort()).toEqual([".wh.old.txt", "new.txt"]);
    expect(readFileSync(join(out, "d".repeat(60), "e".repeat(60), "file.txt"), "utf8")).toBe("long\n");
    expect(readFileSync(join(out, ".wh.gone.txt"), "utf8")).toBe("");
  });

  test("commit makes the workspace equal the merged view", async () => {
    expect(await commitChanges(views)).toEqual({ files: 5, directories: 4, symlinks: 1, deleted: 3 });
    const tree = (base: string): string[] =>
      readdirSync(base, { recursive: true, withFileTypes: true })
        .map((entry) => {
          const path = join(entry.parentPath, entry.name);
          const relative = path.slice(base.length + 1);
          if (entry.isSymbolicLink()) return `${relative} -> ${readlinkSync(path)}`;
          if (entry.isDirectory()) return `${relative}/`;
          return `${relative}: ${readFileSync(path, "utf8")}`;
        })
        .sort();
    expect(tree(views.lower)).toEqual(tree(views.merged));
    expect(lstatSync(join(views.lower, "change.txt")).mode & 0o777).toBe(0o640);
    // Committing again changes nothing.
    await commitChanges(views);
    expect(tree(views.lower)).toEqual(tree(views.merged));
  });
});
