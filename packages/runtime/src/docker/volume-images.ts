import { existsSync } from "node:fs";
import { chmod, mkdir, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import type { VolumeStorage } from "../runtime.js";
import { isMountPoint, makeExt4Image, mountImage, unmount } from "./ext4-image.js";

/**
 * Volumes on the host (decision 0192): each an ext4 image of its size in `dir`, loop-mounted on
 * a directory beside it that sandboxes get as a bind mount. The image is the volume's quota, as
 * for a sandbox's writable layer (decision 0120): a write past it is ENOSPC in the sandbox and
 * the host gives no more. Images outlive sandboxes and restarts; `mount` mounts one again when
 * the host lost its mount (a reboot, a restart in a new mount namespace).
 */
export class VolumeImages implements VolumeStorage {
  constructor(private readonly dir: string) {}

  async create(volumeId: string, bytes: number): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await makeExt4Image(this.imagePath(volumeId), bytes);
    await this.mount(volumeId);
    const directory = this.mountPath(volumeId);
    await rmdir(join(directory, "lost+found"));
    // Any user a sandbox runs as (root, or E2B's `user`) may write to it.
    await chmod(directory, 0o777);
  }

  async mount(volumeId: string): Promise<void> {
    const directory = this.mountPath(volumeId);
    if (await isMountPoint(directory)) return;
    if (!existsSync(this.imagePath(volumeId)))
      throw new Error(`volume ${volumeId} has no image on this host`);
    await mkdir(directory, { recursive: true, mode: 0o755 });
    // A sandbox's files are never devices or set-uid programs for the next sandbox.
    await mountImage(this.imagePath(volumeId), directory, ["nodev", "nosuid"]);
  }

  async directory(volumeId: string): Promise<string> {
    const directory = this.mountPath(volumeId);
    // Only ever the mounted image, never a bare directory of the host's disk outside the quota.
    if (!(await isMountPoint(directory))) throw new Error(`volume ${volumeId} is not mounted on this host`);
    return directory;
  }

  async remove(volumeId: string): Promise<void> {
    const directory = this.mountPath(volumeId);
    if (await isMountPoint(directory)) await unmount(directory);
    // Empty once unmounted; never removed recursively, which could reach into a mounted volume.
    await rmdir(directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
    await rm(this.imagePath(volumeId), { force: true });
  }

  private imagePath(volumeId: string): string {
    return join(this.dir, `${volumeId}.ext4`);
  }

  private mountPath(volumeId: string): string {
    return join(this.dir, volumeId);
  }
}
