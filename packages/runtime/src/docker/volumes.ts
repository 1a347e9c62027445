import { lstat, mkdir, realpath } from "node:fs/promises";
import { posix } from "node:path";
import { Errors, PaddockError } from "@paddock/common";
import type Docker from "dockerode";
import type { WorkloadSpec } from "../runtime.js";
import { succeeds } from "./existence-check.js";
import { createReadOnlyView, plainVolumeDirectory } from "./read-only-view.js";

export type Mount = NonNullable<NonNullable<Docker.ContainerCreateOptions["HostConfig"]>["Mounts"]>[number];

const ownerLabel = "paddock.volume-owner";
const creatorLabel = "paddock.volume-created-by";

/**
 * A path the engine resolves again at every start of the sandbox's container (a resume from disk
 * included): `path`, below `root`, was reached through no symlink at create, and must still be.
 * Sandboxes can write below `root` (a volume's files, a host directory), so between two starts
 * one could put a symlink in its place, and the engine would follow it out of the volume.
 */
export interface CheckedPath {
  root: string;
  path: string;
}

/**
 * Docker mounts for a sandbox's volumes, and the paths to check again before each start of it.
 * Host paths have already been checked against the operator's allow-list; named volumes are
 * created when asked, labelled with the sandbox that must delete them. A read-only volume is
 * mounted through a read-only view made for this sandbox, so the host refuses its writes whatever
 * the sandbox remounts (decision 0002).
 */
export async function mountsFor(
  docker: Docker,
  spec: WorkloadSpec,
): Promise<{ mounts: Mount[]; checkedPaths: CheckedPath[] }> {
  const mounts: Mount[] = [];
  const checkedPaths: CheckedPath[] = [];
  const within = async (root: string, subPath: string, name: string) => {
    if (subPath) checkedPaths.push({ root, path: subPath });
    return directoryWithin(root, subPath, name);
  };
  for (const [index, volume] of spec.volumes.entries()) {
    const view = volume.readOnly ? `paddock-ro-${spec.sandboxId}-${index}` : undefined;
    const viewLabels = {
      "paddock.managed": "true",
      [creatorLabel]: spec.sandboxId,
      [ownerLabel]: spec.sandboxId,
    };
    if (volume.managed) {
      // A registry volume (decision 0192): its filesystem's directory, or one inside it.
      const source = await within(volume.managed.directory, volume.subPath ?? "", volume.name);
      if (view) {
        await createReadOnlyView(docker, view, source, viewLabels);
        mounts.push({ Type: "volume", Source: view, Target: volume.mountPath, ReadOnly: true });
      } else {
        mounts.push({ Type: "bind", Source: source, Target: volume.mountPath, ReadOnly: false });
      }
    } else if (volume.host) {
      const source = await hostPathWithoutSymlinks(
        volume.subPath ? posix.join(volume.host.path, volume.subPath) : volume.host.path,
      );
      checkedPaths.push({ root: "/", path: source.slice(1) });
      if (view) {
        await createReadOnlyView(docker, view, await viewableHostDirectory(source), viewLabels);
        mounts.push({ Type: "volume", Source: view, Target: volume.mountPath, ReadOnly: true });
      } else {
        mounts.push({ Type: "bind", Source: source, Target: volume.mountPath, ReadOnly: false });
      }
    } else if (volume.pvc) {
      const name = volume.pvc.claimName;
      if (!(await succeeds(docker.getVolume(name).inspect()))) {
        if (volume.pvc.createIfNotExists === false) {
          throw new PaddockError(
            Errors.invalidRequest,
            `volume ${name} does not exist and createIfNotExists is false`,
          );
        }
        const labels: Record<string, string> = { "paddock.managed": "true", [creatorLabel]: spec.sandboxId };
        if (volume.pvc.deleteOnSandboxTermination) labels[ownerLabel] = spec.sandboxId;
        await docker.createVolume({ Name: name, Labels: labels });
      }
      if (view) {
        await createReadOnlyView(
          docker,
          view,
          await volumeDirectory(docker, name, volume.subPath ?? "", within),
          viewLabels,
        );
        mounts.push({ Type: "volume", Source: view, Target: volume.mountPath, ReadOnly: true });
      } else if (volume.subPath) {
        mounts.push(await volumeSubPathMount(docker, name, volume.subPath, volume.mountPath, within));
      } else {
        mounts.push({ Type: "volume", Source: name, Target: volume.mountPath, ReadOnly: false });
      }
    }
  }
  return { mounts, checkedPaths };
}

/**
 * Before a start of a stopped sandbox: each checked path is still reached through no symlink.
 * Refused otherwise (the engine would follow the symlink out of the volume), naming the path.
 */
export async function checkPathsAgain(paths: CheckedPath[]): Promise<void> {
  for (const { root, path } of paths) {
    for await (const { current, stats, last } of componentsBelow(root, path)) {
      if (!stats || stats.isSymbolicLink() || (!last && !stats.isDirectory())) {
        throw new PaddockError(
          Errors.invalidRequest,
          `volume path ${posix.join(root, path)} is no longer reached through directories only (${current} is ${stats ? (stats.isSymbolicLink() ? "a symlink" : "not a directory") : "gone"}): the sandbox's volumes are not mounted`,
        );
      }
    }
  }
}

/**
 * A host volume's path, refused when a symlink is on the way: below the operator's prefix a
 * sandbox may write (a host directory mounted read-write), and a symlink it left would take the
 * mount anywhere on the host. The path itself may be missing (Docker then says so).
 */
async function hostPathWithoutSymlinks(path: string): Promise<string> {
  const normalized = posix.normalize(path).replace(/(.)\/$/, "$1");
  for await (const { current, stats } of componentsBelow("/", normalized)) {
    if (!stats) break;
    if (stats.isSymbolicLink()) {
      throw new PaddockError(
        Errors.invalidRequest,
        `host path ${path}: ${current} is a symlink; a host volume must be reached through no symlink`,
      );
    }
  }
  return normalized;
}

/** Each component of `path` below `root`, in order, as lstat(2) finds it (undefined: missing). */
async function* componentsBelow(root: string, path: string) {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  let current = root;
  for (const [index, part] of parts.entries()) {
    current = posix.join(current, part);
    const stats = await lstat(current).catch(() => undefined);
    yield { current, stats, last: index === parts.length - 1 };
  }
}

/**
 * A read-only host volume's directory, which the view binds: a real directory (a view cannot be
 * of one file), reached through no symlink, which could lead outside the operator's prefixes.
 */
async function viewableHostDirectory(path: string): Promise<string> {
  const normalized = posix.normalize(path).replace(/(.)\/$/, "$1");
  const resolved = await realpath(normalized).catch(() => undefined);
  if (resolved !== normalized || !(await isRealDirectory(resolved))) {
    throw new PaddockError(
      Errors.invalidRequest,
      `host path ${path}: a read-only host volume must be an existing directory, reached through no symlink`,
    );
  }
  return resolved;
}

/** Docker mounts a named volume's subdirectory itself from Engine API 1.45 (VolumeOptions.Subpath). */
const subpathApiVersion = [1, 45];

/**
 * A directory inside a named volume, mounted at `target`. The subpath is relative and free of
 * `..` (checked at create), and is created when missing, as Kubernetes does for a subPath.
 * Engines with API ≥ 1.45 mount it natively. Older engines (Debian 12's Docker 20.10 speaks 1.41)
 * get a bind mount of the directory inside the volume's local mountpoint.
 */
async function volumeSubPathMount(
  docker: Docker,
  name: string,
  subPath: string,
  target: string,
  within: typeof directoryWithin,
): Promise<Mount> {
  const parts = subPath.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.length === 0) return { Type: "volume", Source: name, Target: target, ReadOnly: false };
  if (await engineAtLeast(docker, subpathApiVersion)) {
    return {
      Type: "volume",
      Source: name,
      Target: target,
      ReadOnly: false,
      VolumeOptions: { Subpath: parts.join("/") },
    } as Mount;
  }
  return {
    Type: "bind",
    Source: await volumeDirectory(docker, name, subPath, within),
    Target: target,
    ReadOnly: false,
  };
}

/** The host directory of a local named volume, or of a subpath inside it (see `directoryWithin`). */
async function volumeDirectory(
  docker: Docker,
  name: string,
  subPath: string,
  within: typeof directoryWithin,
): Promise<string> {
  const mountpoint = await plainVolumeDirectory(docker, name);
  if (!mountpoint || !(await isRealDirectory(mountpoint))) {
    throw new PaddockError(
      Errors.invalidRequest,
      `volume ${name}: a subPath or a read-only mount needs a plain local volume on this host`,
    );
  }
  return within(mountpoint, subPath, name);
}

/**
 * A directory inside a volume's `root`, walked one component at a time without following
 * symlinks (and made where missing): a sandbox that wrote a symlink into the volume cannot make
 * the mount reach outside it.
 */
async function directoryWithin(root: string, subPath: string, name: string): Promise<string> {
  let directory = root;
  for (const part of subPath.split("/").filter((part) => part !== "" && part !== ".")) {
    directory = posix.join(directory, part);
    await mkdir(directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    if (!(await isRealDirectory(directory))) {
      throw new PaddockError(
        Errors.invalidRequest,
        `volume ${name}: subPath ${subPath} must name directories inside the volume, not symlinks or files`,
      );
    }
  }
  return directory;
}

async function isRealDirectory(path: string): Promise<boolean> {
  const stats = await lstat(path).catch(() => undefined);
  return stats?.isDirectory() === true;
}

async function engineAtLeast(docker: Docker, [major, minor]: number[]): Promise<boolean> {
  const { ApiVersion } = await docker.version();
  const [haveMajor = 0, haveMinor = 0] = ApiVersion.split(".").map(Number);
  return haveMajor > (major ?? 0) || (haveMajor === major && haveMinor >= (minor ?? 0));
}

/** Removes the named volumes this sandbox created with deleteOnSandboxTermination. */
export async function removeOwnedVolumes(docker: Docker, sandboxId: string): Promise<void> {
  await removeVolumesLabelled(docker, `${ownerLabel}=${sandboxId}`);
}

/** Removes every volume a sandbox's create made: a create that fails leaves none behind. */
export async function removeVolumesCreatedBy(docker: Docker, sandboxId: string): Promise<void> {
  await removeVolumesLabelled(docker, `${creatorLabel}=${sandboxId}`);
}

/** Removes each volume with this label, passing over any it cannot remove. */
async function removeVolumesLabelled(docker: Docker, label: string): Promise<void> {
  const { Volumes } = await docker.listVolumes({ filters: { label: [label] } });
  for (const volume of Volumes ?? []) {
    await docker
      .getVolume(volume.Name)
      .remove()
      .catch(() => undefined);
  }
}
