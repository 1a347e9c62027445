// Node only: reads a directory from disk. Loaded when a build packs one (`await import`), so the
// rest of the SDK never pulls node:fs or the tar code in.
import { readFile, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import dockerignoreModule from "@balena/dockerignore";
import { create } from "tar";
import { InvalidRequestError } from "./errors.js";

// A CommonJS module whose function is also its `default`, which is what its types describe.
const dockerignore = dockerignoreModule.default;

/**
 * Hard links go as plain files: the server's builds take files, directories and symlinks, and
 * would leave out a second name tar wrote as a link to the first.
 */
class NoHardLinks extends Map<`${number}:${number}`, string> {
  override set(): this {
    return this;
  }
}

/**
 * The directory as a tar.gz stream, as `docker build` would send it: paths relative to the
 * directory, what its `.dockerignore` names left out (Docker's pattern rules, `!` exceptions
 * included), times and owners dropped. `keep` (the Dockerfile, say) goes in even when ignored.
 * Symlinks go as links; their targets are never read.
 */
export async function packDirectory(
  directory: string,
  keep: string[] = [],
): Promise<AsyncIterable<Uint8Array>> {
  const info = await stat(directory).catch(() => undefined);
  if (!info?.isDirectory())
    throw new InvalidRequestError(`${directory} is not a directory`, "invalid_build_context", 0);
  const patterns = await readFile(join(directory, ".dockerignore"), "utf8").catch(() => "");
  const ignored = dockerignore().add(patterns);
  const kept = new Set(keep.map((name) => posix.normalize(name)));
  // Directories a kept file, or a `!` exception, may sit in are walked even when ignored.
  const walked = new Set([...kept].flatMap(ancestors));
  const hasExceptions = /^\s*!/m.test(patterns);
  return create(
    {
      cwd: directory,
      gzip: true,
      portable: true,
      linkCache: new NoHardLinks(),
      filter: (path, entry) => {
        const name = path.replace(/^\.\/?/, "");
        if (!name || kept.has(name) || !ignored.ignores(name)) return true;
        return "isDirectory" in entry && entry.isDirectory() && (hasExceptions || walked.has(name));
      },
    },
    ["."],
  );
}

/** Whether `name` (relative to `directory`) is a file there. */
export async function isFileIn(directory: string, name: string): Promise<boolean> {
  return (await stat(join(directory, name)).catch(() => undefined))?.isFile() ?? false;
}

function ancestors(name: string): string[] {
  const parents: string[] = [];
  for (let parent = posix.dirname(name); parent !== "." && parent !== "/"; parent = posix.dirname(parent))
    parents.push(parent);
  return parents;
}
