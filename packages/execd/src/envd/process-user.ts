import { statSync } from "node:fs";
import { EXECD_WORKDIR_ENV } from "@paddock/common/contracts";
import { ConnectError } from "./connect.js";
import { defaultUserName, envdUser } from "./files-user.js";

/** Who a process runs as, and what that changes in its environment and default directory. */
export interface RunAs {
  /** Unset: execd's own user (root in Paddock's sandboxes). */
  uid?: number;
  gid?: number;
  home: string;
  env: Record<string, string>;
}

/**
 * The user an envd call names (`Authorization: Basic base64(user:)`), looked up as the files
 * service looks it up (an unknown name is refused the same way): its uid and gid, and HOME,
 * USER and LOGNAME. No name (the SDK sends none since envd 0.4.0) means the sandbox's default
 * user when its image sets one (E2B's base: `user`), else execd's own user and environment, as
 * execd's other commands have them.
 */
export async function runAs(given: string | undefined): Promise<RunAs> {
  const name = given || defaultUserName();
  if (name === undefined) return { home: process.env.HOME ?? "/", env: {} };
  const user = await envdUser(name);
  return {
    uid: user.uid,
    gid: user.gid,
    home: user.home,
    env: { HOME: user.home, USER: name, LOGNAME: name },
  };
}

/**
 * The directory a process starts in: the one asked for, else the template's working directory
 * (decision 0198), else the user's home if it exists, else /.
 */
export function workingDirectory(cwd: string | undefined, home: string): string {
  if (cwd !== undefined) {
    if (!isDirectory(cwd)) throw new ConnectError("invalid_argument", `cwd '${cwd}' is not a directory`);
    return cwd;
  }
  const workdir = process.env[EXECD_WORKDIR_ENV];
  if (workdir && isDirectory(workdir)) return workdir;
  return isDirectory(home) ? home : "/";
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
