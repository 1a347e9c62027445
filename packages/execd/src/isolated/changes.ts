import type { Stats } from "node:fs";
import { createReadStream } from "node:fs";
import {
  chmod,
  copyFile,
  lchown,
  lstat,
  mkdir,
  readdir,
  readlink,
  rename,
  rm,
  symlink,
  utimes,
} from "node:fs/promises";
import { join } from "node:path";
import { padding, tarEnd, tarHeader } from "./tar.js";

/** The three views of one overlay session, as paths execd can open. */
export interface OverlayViews {
  /** The session's upper directory: everything it created or changed, plus whiteouts. */
  upper: string;
  /** The real workspace, untouched by the session. */
  lower: string;
  /** What the session sees: upper over lower. */
  merged: string;
}

export type Change =
  | { kind: "deleted"; path: string }
  | { kind: "directory" | "file" | "symlink"; path: string; stats: Stats };

/** Whiteout prefix of OCI image layers: `dir/.wh.name` records that `dir/name` was deleted. */
export const whiteoutPrefix = ".wh.";

/**
 * Every change the session made, parents before children, deletions of a directory's entries
 * before its new ones. Deletions are found by comparing, not by reading whiteouts: an entry of a
 * directory the session touched that is in the workspace but no longer in the merged view was
 * deleted (this also covers a directory removed and made again, which overlayfs marks opaque
 * with an extended attribute Node cannot read).
 */
export async function* overlayChanges(views: OverlayViews, relative = ""): AsyncGenerator<Change> {
  const upperEntries = await readdir(join(views.upper, relative), { withFileTypes: true });
  const lowerNames = await readdir(join(views.lower, relative)).catch(() => [] as string[]);
  const mergedNames = new Set(await readdir(join(views.merged, relative)).catch(() => [] as string[]));
  for (const name of lowerNames.sort()) {
    if (!mergedNames.has(name)) yield { kind: "deleted", path: join(relative, name) };
  }
  upperEntries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of upperEntries) {
    // Whiteouts (0:0 character devices) are the deletions already reported above.
    if (entry.isCharacterDevice() || !mergedNames.has(entry.name)) continue;
    const path = join(relative, entry.name);
    const stats = await lstat(join(views.upper, path));
    if (stats.isDirectory()) {
      yield { kind: "directory", path, stats };
      yield* overlayChanges(views, path);
    } else if (stats.isSymbolicLink()) {
      yield { kind: "symlink", path, stats };
    } else if (stats.isFile()) {
      yield { kind: "file", path, stats };
    }
  }
}

/**
 * The session's changes as a tar stream: new and changed entries as themselves, deletions as
 * empty OCI whiteout files (`dir/.wh.name`).
 */
export async function* diffTar(views: OverlayViews): AsyncGenerator<Buffer> {
  for await (const change of overlayChanges(views)) {
    if (change.kind === "deleted") {
      const slash = change.path.lastIndexOf("/");
      const whiteout = `${change.path.slice(0, slash + 1)}${whiteoutPrefix}${change.path.slice(slash + 1)}`;
      yield tarHeader({
        path: whiteout,
        type: "file",
        mode: 0o644,
        uid: 0,
        gid: 0,
        mtimeSeconds: 0,
        size: 0,
      });
      continue;
    }
    const { stats, path } = change;
    const common = {
      path,
      mode: stats.mode,
      uid: stats.uid,
      gid: stats.gid,
      mtimeSeconds: stats.mtimeMs / 1000,
    };
    if (change.kind === "directory") yield tarHeader({ ...common, type: "directory" });
    if (change.kind === "symlink") {
      yield tarHeader({ ...common, type: "symlink", linkTarget: await readlink(join(views.upper, path)) });
    }
    if (change.kind === "file") {
      yield tarHeader({ ...common, type: "file", size: stats.size });
      let written = 0;
      // Exactly the size announced in the header, even if the file changes while it is read.
      if (stats.size > 0) {
        for await (const chunk of createReadStream(join(views.upper, path), { end: stats.size - 1 })) {
          written += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
      }
      if (written < stats.size) yield Buffer.alloc(stats.size - written);
      yield padding(stats.size);
    }
  }
  yield tarEnd;
}

export interface CommitSummary {
  files: number;
  directories: number;
  symlinks: number;
  deleted: number;
}

/** Applies the session's changes to the real workspace: deletions included, owners and modes kept. */
export async function commitChanges(views: OverlayViews): Promise<CommitSummary> {
  const summary: CommitSummary = { files: 0, directories: 0, symlinks: 0, deleted: 0 };
  for await (const change of overlayChanges(views)) {
    const target = join(views.lower, change.path);
    if (change.kind === "deleted") {
      await rm(target, { recursive: true, force: true });
      summary.deleted++;
      continue;
    }
    const { stats } = change;
    const existing = await lstat(target).catch(() => undefined);
    const sameKind =
      existing &&
      ((change.kind === "directory" && existing.isDirectory()) ||
        (change.kind === "file" && existing.isFile()));
    if (existing && !sameKind) await rm(target, { recursive: true, force: true });
    const source = join(views.upper, change.path);
    if (change.kind === "directory") {
      await mkdir(target, { recursive: true });
      summary.directories++;
    } else if (change.kind === "symlink") {
      await symlink(await readlink(source), target);
      summary.symlinks++;
    } else {
      // A copy beside the target, then a rename: readers of the workspace never see half a file.
      const partial = `${target}.paddock-commit-${process.pid}`;
      await copyFile(source, partial);
      await rename(partial, target);
      summary.files++;
    }
    await lchown(target, stats.uid, stats.gid);
    if (change.kind !== "symlink") {
      await chmod(target, stats.mode & 0o7777);
      await utimes(target, stats.atime, stats.mtime);
    }
  }
  return summary;
}
