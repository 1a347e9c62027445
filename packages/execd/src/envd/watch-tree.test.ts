import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { DirectoryWatch, type WatchEvent } from "./watch-tree.js";

const label = (event: WatchEvent) => `${event.type.replace("EVENT_TYPE_", "")} ${event.name}`;

/**
 * Reads events until `done` says enough and a little more (what the same operation still
 * causes), or fails after a few seconds with what arrived. Repeats in a row count once: a write
 * may be reported once per batch of write(2) calls.
 */
async function collect(watch: DirectoryWatch, done: (events: WatchEvent[]) => boolean): Promise<string[]> {
  const events: WatchEvent[] = [];
  const deadline = Date.now() + 5000;
  const more = async () => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    events.push(...watch.take());
  };
  while (!done(events)) {
    if (Date.now() > deadline) throw new Error(`only these events arrived: ${JSON.stringify(events)}`);
    await more();
  }
  await more();
  return events.map(label).filter((text, index, all) => text !== all[index - 1]);
}

const has =
  (...wanted: string[]) =>
  (events: WatchEvent[]) =>
    wanted.every((want) => events.some((event) => label(event) === want));

describe("DirectoryWatch", () => {
  let dir: string;
  let watch: DirectoryWatch | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "watch-"));
  });
  afterEach(async () => {
    watch?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("reports creation, write, chmod, rename and removal, and nothing for what existed before", async () => {
    await writeFile(join(dir, "old.txt"), "old");
    watch = await DirectoryWatch.open(dir, false);
    await writeFile(join(dir, "a.txt"), "one");
    expect(await collect(watch, has("WRITE a.txt"))).toEqual(["CREATE a.txt", "WRITE a.txt"]);
    await writeFile(join(dir, "old.txt"), "new");
    expect(await collect(watch, has("WRITE old.txt"))).toEqual(["WRITE old.txt"]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await chmod(join(dir, "a.txt"), 0o600);
    expect(await collect(watch, has("CHMOD a.txt"))).toEqual(["CHMOD a.txt"]);
    await rename(join(dir, "a.txt"), join(dir, "b.txt"));
    expect(await collect(watch, has("CREATE b.txt"))).toEqual(["RENAME a.txt", "CREATE b.txt"]);
    await rm(join(dir, "b.txt"));
    expect(await collect(watch, has("REMOVE b.txt"))).toEqual(["REMOVE b.txt"]);
  });

  test("a file created and removed at once is both, and a move onto a name replaces it", async () => {
    await writeFile(join(dir, "target"), "before");
    watch = await DirectoryWatch.open(dir, false);
    await writeFile(join(dir, "brief"), "x");
    await rm(join(dir, "brief"));
    expect(await collect(watch, has("REMOVE brief"))).toEqual([
      "CREATE brief",
      "WRITE brief",
      "REMOVE brief",
    ]);
    await writeFile(join(dir, "partial"), "after");
    await rename(join(dir, "partial"), join(dir, "target"));
    expect(await collect(watch, has("CREATE target"))).toEqual([
      "CREATE partial",
      "WRITE partial",
      "RENAME partial",
      "CREATE target",
    ]);
  });

  test("recursive: events below, in directories made later too, named relative to the root", async () => {
    await mkdir(join(dir, "sub"));
    watch = await DirectoryWatch.open(dir, true);
    await writeFile(join(dir, "sub", "f"), "1");
    expect(await collect(watch, has("WRITE sub/f"))).toEqual(["CREATE sub/f", "WRITE sub/f"]);
    // The file may be there before its directory is watched: found by the directory's scan then.
    await mkdir(join(dir, "new", "deep"), { recursive: true });
    await writeFile(join(dir, "new", "deep", "g"), "2");
    const created = await collect(watch, has("CREATE new/deep/g"));
    expect(created.slice(0, 3)).toEqual(["CREATE new", "CREATE new/deep", "CREATE new/deep/g"]);
    await rm(join(dir, "new"), { recursive: true });
    expect(await collect(watch, has("REMOVE new"))).toEqual([
      "REMOVE new/deep/g",
      "REMOVE new/deep",
      "REMOVE new",
    ]);
  });

  test("not recursive: nothing from below", async () => {
    await mkdir(join(dir, "sub"));
    watch = await DirectoryWatch.open(dir, false);
    await writeFile(join(dir, "sub", "f"), "1");
    await writeFile(join(dir, "top"), "1");
    expect(await collect(watch, has("WRITE top"))).toEqual(["CREATE top", "WRITE top"]);
  });

  test("the watched directory's removal ends the watch with not_found", async () => {
    const inner = join(dir, "inner");
    await mkdir(inner);
    watch = await DirectoryWatch.open(inner, true);
    await rm(inner, { recursive: true });
    await expect(collect(watch, () => false)).rejects.toMatchObject({ code: "not_found" });
  });

  test("a missing directory fails to open", async () => {
    await expect(DirectoryWatch.open(join(dir, "missing"), false)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
