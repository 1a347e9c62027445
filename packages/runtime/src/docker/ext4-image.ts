import { execFile } from "node:child_process";
import { truncate, writeFile } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Filesystems of a fixed size on the host: a sparse ext4 image loop-mounted where the space is
 * used, so the kernel answers ENOSPC past its size under every runtime (decision 0120). Sandbox
 * disk quotas and volumes both stand on these.
 */

/** Makes a sparse file of `bytes` at `image` holding an empty ext4 filesystem. */
export async function makeExt4Image(image: string, bytes: number): Promise<void> {
  await writeFile(image, "", { mode: 0o600 });
  await truncate(image, bytes);
  // No journal and no reserved blocks: the whole size is the user's.
  await run("mkfs.ext4", ["-q", "-F", "-m", "0", "-O", "^has_journal", image]);
}

/** Loop-mounts the image on `directory` (which must exist), with extra mount options if given. */
export async function mountImage(image: string, directory: string, options: string[] = []): Promise<void> {
  await run("mount", ["-o", ["loop", ...options].join(","), image, directory]);
}

export async function unmount(directory: string): Promise<void> {
  await run("umount", [directory]);
}

/** True when a filesystem is mounted on `directory` itself. */
export async function isMountPoint(directory: string): Promise<boolean> {
  return run("mountpoint", ["-q", directory]).then(
    () => true,
    () => false,
  );
}

/** Copies a directory's contents, owners and modes kept, into another. */
export async function copyTree(from: string, to: string): Promise<void> {
  await run("cp", ["-a", `${from}/.`, to]);
}
