import { existsSync } from "node:fs";
import { chmod, chown, mkdir, rm, rmdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type Docker from "dockerode";
import { makeExt4Image, mountImage, unmount } from "./ext4-image.js";

/**
 * Per-sandbox disk quotas (decision 0120). The engine's overlay2 layers sit on the host's ext4,
 * where `--storage-opt size` is refused, so each sandbox's writable layer directory gets a
 * filesystem of its own: a sparse ext4 image of the quota's size in `dir`, loop-mounted over the
 * container's layer directory between create and start. The kernel then answers ENOSPC inside
 * the sandbox once the quota is used, under runc and gVisor alike, and the host gives no more
 * than the quota. Removing the container unmounts it (the engine unmounts what it finds while
 * deleting a layer); `release` deletes the image.
 */
export class DiskQuotas {
  constructor(private readonly dir: string) {}

  /** Why quotas cannot work against this engine from this process, or undefined when they can. */
  static unsupportedReason(info: { Driver?: string }, socketPath: string): string | undefined {
    if (info.Driver !== "overlay2") return `the engine's storage driver is ${info.Driver}, not overlay2`;
    if (process.getuid?.() !== 0) return "the server does not run as root, so it cannot mount filesystems";
    if (!socketPath.startsWith("/")) return "the engine is not on this host";
    return undefined;
  }

  /** Gives the created (not yet started) container a writable layer of `bytes`. */
  async attach(docker: Docker, sandboxId: string, bytes: number): Promise<void> {
    const inspected = await docker.getContainer(sandboxId).inspect();
    const upper = (inspected.GraphDriver?.Data as { UpperDir?: string } | undefined)?.UpperDir;
    if (inspected.GraphDriver?.Name !== "overlay2" || !upper)
      throw new Error(`sandbox ${sandboxId} has no overlay2 layer to put its disk quota on`);
    const layer = dirname(upper);
    const image = this.imagePath(sandboxId);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // The layer directory holds the engine's bookkeeping (diff, work, link, lower): copied onto
    // the new filesystem as it is made, which then takes the directory's place.
    const owner = await stat(layer);
    await makeExt4Image(image, bytes, layer);
    await mountImage(image, layer);
    // mkfs makes lost+found and its own root directory: the layer's stays as the engine made it.
    await rmdir(join(layer, "lost+found"));
    await chown(layer, owner.uid, owner.gid);
    await chmod(layer, owner.mode & 0o7777);
  }

  /** Deletes the sandbox's disk image; a loop device still using it frees the space when detached. */
  async release(sandboxId: string): Promise<void> {
    const staging = `${this.imagePath(sandboxId)}.staging`;
    // A server of an earlier version stopped half-way through `attach` can leave the staging
    // mount it copied the layer through behind.
    if (existsSync(staging)) await unmount(staging).catch(() => undefined);
    await rm(staging, { recursive: true, force: true });
    await rm(this.imagePath(sandboxId), { force: true });
  }

  private imagePath(sandboxId: string): string {
    return join(this.dir, `${sandboxId}.ext4`);
  }
}
