import { chown, mkdir, readFile, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { EXECD_ENVD_USER_ENV } from "@paddock/common/contracts";
import { ConnectError } from "./connect.js";

/** The user an envd call acts as: relative paths resolve against its home, new files are its own. */
export interface EnvdUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

async function lines(file: string): Promise<string[][]> {
  try {
    return (await readFile(file, "utf8"))
      .split("\n")
      .filter((line) => line && !line.startsWith("#"))
      .map((line) => line.split(":"));
  } catch {
    // An image without the file: numeric ids it is.
    return [];
  }
}

/**
 * The sandbox's users and groups as /etc/passwd and /etc/group say right now, read once per call:
 * a listing asks for an owner and a group per entry.
 */
export class Accounts {
  private constructor(
    private readonly users: EnvdUser[],
    private readonly groups: Map<number, string>,
  ) {}

  static async read(): Promise<Accounts> {
    const [passwd, group] = await Promise.all([lines("/etc/passwd"), lines("/etc/group")]);
    const users = passwd.map(([name = "", , uid = "", gid = "", , home = ""]) => ({
      name,
      uid: Number(uid),
      gid: Number(gid),
      home: home || "/",
    }));
    const groups = new Map(group.map(([name = "", , gid = ""]) => [Number(gid), name]));
    return new Accounts(users, groups);
  }

  userName(uid: number): string {
    return this.users.find((user) => user.uid === uid)?.name ?? String(uid);
  }

  groupName(gid: number): string {
    return this.groups.get(gid) ?? String(gid);
  }

  /**
   * The named user (envd's Basic-auth user or `username` parameter), or without a name the
   * sandbox's default (`defaultUserName`), else the user execd runs as (root). envd answers an
   * unknown name as unauthenticated, and so does this.
   */
  user(given: string | undefined): EnvdUser {
    const name = given || defaultUserName();
    if (name === undefined) {
      const uid = process.getuid?.() ?? 0;
      const found = this.users.find((user) => user.uid === uid);
      return found ?? { name: String(uid), uid, gid: process.getgid?.() ?? 0, home: process.env.HOME ?? "/" };
    }
    const found = this.users.find((user) => user.name === name);
    if (!found) throw new ConnectError("unauthenticated", `invalid username: '${name}'`);
    return found;
  }
}

/**
 * The account calls that name none act as, as the template's image sets it (E2B's base: `user`),
 * the way E2B's envd has a default user; undefined for execd's own.
 */
export function defaultUserName(): string | undefined {
  return process.env[EXECD_ENVD_USER_ENV] || undefined;
}

/** The user of a call, looked up now. */
export async function envdUser(name: string | undefined): Promise<EnvdUser> {
  return (await Accounts.read()).user(name);
}

/**
 * A client's path as an absolute one, as envd resolves it: `~` and `~/…` are the user's home,
 * a relative path is relative to the home, `..` segments are resolved.
 */
export function resolvePath(path: unknown, user: EnvdUser): string {
  if (typeof path !== "string") throw new ConnectError("invalid_argument", "path must be a string");
  if (path.includes("\0")) throw new ConnectError("invalid_argument", "paths cannot contain a NUL byte");
  if (path.startsWith("~")) {
    if (path !== "~" && !path.startsWith("~/"))
      throw new ConnectError("invalid_argument", `cannot expand another user's home directory in '${path}'`);
    return resolve(user.home, `.${path.slice(1)}`);
  }
  return resolve(user.home, path);
}

/** Changes a new file's owner to the call's user, unless execd is that user already. */
export async function ownBy(path: string, user: EnvdUser): Promise<void> {
  if (user.uid !== process.getuid?.() || user.gid !== process.getgid?.())
    await chown(path, user.uid, user.gid);
}

/**
 * Makes `dir` and any missing parent, each owned by the user, as envd does: the directories an
 * upload or a move creates belong to the user who asked.
 */
export async function ensureDirectory(dir: string, user: EnvdUser): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    const stats = await stat(at).catch((error: NodeJS.ErrnoException) => {
      // ENOTDIR: a file further up, which the walk up finds and names.
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined;
      throw error;
    });
    if (stats) {
      if (!stats.isDirectory()) throw new ConnectError("invalid_argument", `path is a file: ${at}`);
      break;
    }
    missing.unshift(at);
    if (at === dirname(at)) break;
  }
  for (const at of missing) {
    try {
      await mkdir(at, { mode: 0o755 });
    } catch (error) {
      // Made meanwhile by another call: fine when it is a directory.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !(await stat(at)).isDirectory()) throw error;
      continue;
    }
    await ownBy(at, user);
  }
}
