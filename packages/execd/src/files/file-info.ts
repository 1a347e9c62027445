import type { Stats } from "node:fs";
import { readFileSync } from "node:fs";
import { lstat } from "node:fs/promises";

/** Names of users and groups from the sandbox's own /etc files (re-read when they change). */
function namesFrom(file: string): Map<number, string> {
  const names = new Map<number, string>();
  try {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (name && id !== undefined) names.set(Number(id), name);
    }
  } catch {
    // No such file in this image: numeric ids it is.
  }
  return names;
}

export function userName(uid: number): string {
  return namesFrom("/etc/passwd").get(uid) ?? String(uid);
}

export function groupName(gid: number): string {
  return namesFrom("/etc/group").get(gid) ?? String(gid);
}

export function idOfUser(name: string): number | undefined {
  if (/^\d+$/.test(name)) return Number(name);
  for (const [id, user] of namesFrom("/etc/passwd")) if (user === name) return id;
  return undefined;
}

export function idOfGroup(name: string): number | undefined {
  if (/^\d+$/.test(name)) return Number(name);
  for (const [id, group] of namesFrom("/etc/group")) if (group === name) return id;
  return undefined;
}

export type EntryType = "file" | "directory" | "symlink" | "other";

export function entryType(stats: Stats): EntryType {
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isDirectory()) return "directory";
  if (stats.isFile()) return "file";
  return "other";
}

/** The wire FileInfo: mode is the octal permission digits as a number (644, 755). */
export function describe(path: string, stats: Stats) {
  return {
    path,
    type: entryType(stats),
    size: stats.size,
    modified_at: stats.mtime.toISOString(),
    created_at: stats.birthtime.getTime() > 0 ? stats.birthtime.toISOString() : stats.ctime.toISOString(),
    owner: userName(stats.uid),
    group: groupName(stats.gid),
    mode: Number((stats.mode & 0o7777).toString(8)),
  };
}

export async function info(path: string) {
  return describe(path, await lstat(path));
}

/** Octal digits as written on the wire (755) → mode bits. */
export function modeBits(mode: number): number {
  const digits = String(mode);
  if (!/^[0-7]{1,4}$/.test(digits)) throw new Error(`mode ${mode} is not octal digits like 644 or 755`);
  return Number.parseInt(digits, 8);
}
