import { constants, type Stats } from "node:fs";
import { lstat, realpath, stat } from "node:fs/promises";
import { basename } from "node:path";
import type { Message } from "./connect.js";
import type { Accounts } from "./files-user.js";

export type FileType =
  | "FILE_TYPE_UNSPECIFIED"
  | "FILE_TYPE_FILE"
  | "FILE_TYPE_DIRECTORY"
  | "FILE_TYPE_SYMLINK";

export function fileType(stats: Stats | undefined): FileType {
  if (stats?.isFile()) return "FILE_TYPE_FILE";
  if (stats?.isDirectory()) return "FILE_TYPE_DIRECTORY";
  if (stats?.isSymbolicLink()) return "FILE_TYPE_SYMLINK";
  return "FILE_TYPE_UNSPECIFIED";
}

/**
 * A mode as envd's `permissions` spells it, which is Go's `fs.FileMode` string: one letter per
 * type and special bit in Go's order (d directory, L symlink, D device, p pipe, S socket,
 * u setuid, g setgid, c character device, t sticky), `-` when there is none, then `rwxrwxrwx`.
 */
/** Not in Node's `fs.constants` typings: setuid, setgid and sticky bits. */
const setUid = 0o4000;
const setGid = 0o2000;
const sticky = 0o1000;

export function permissionString(mode: number): string {
  const type = mode & constants.S_IFMT;
  const letters = [
    [type === constants.S_IFDIR, "d"],
    [type === constants.S_IFLNK, "L"],
    [type === constants.S_IFBLK || type === constants.S_IFCHR, "D"],
    [type === constants.S_IFIFO, "p"],
    [type === constants.S_IFSOCK, "S"],
    [(mode & setUid) !== 0, "u"],
    [(mode & setGid) !== 0, "g"],
    [type === constants.S_IFCHR, "c"],
    [(mode & sticky) !== 0, "t"],
  ] as const;
  const prefix = letters.flatMap(([set, letter]) => (set ? [letter] : [])).join("") || "-";
  const bits = "rwxrwxrwx"
    .split("")
    .map((letter, index) => (mode & (1 << (8 - index)) ? letter : "-"))
    .join("");
  return `${prefix}${bits}`;
}

/**
 * The EntryInfo message of `path` (protobuf JSON: int64 size as a string, enums by name), as envd
 * describes an entry: the entry itself (not followed) for name, size, time and `permissions`; for a
 * symlink the type and mode of what it finally points at and that target's path, or the link's
 * own path when it cannot be resolved.
 */
export async function entryInfo(path: string, accounts: Accounts, stats?: Stats): Promise<Message> {
  const own = stats ?? (await lstat(path));
  let target: string | undefined;
  let typed: Stats | undefined = own;
  if (own.isSymbolicLink()) {
    target = await realpath(path).catch(() => path);
    typed = await stat(target).catch(() => undefined);
  }
  return {
    name: basename(path) || path,
    type: fileType(typed),
    path,
    size: String(own.size),
    mode: typed ? typed.mode & 0o777 : 0,
    permissions: permissionString(own.mode),
    owner: accounts.userName(own.uid),
    group: accounts.groupName(own.gid),
    modifiedTime: own.mtime.toISOString(),
    ...(target !== undefined ? { symlinkTarget: target } : {}),
  };
}
