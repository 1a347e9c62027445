import type Docker from "dockerode";

/**
 * A read-only view of a directory on the engine's host: a volume of the local driver that the
 * engine mounts as a read-only bind of `source` before any container sees it.
 *
 * A sandbox's own mount flags cannot keep it out: under gVisor, root in a new user namespace may
 * remount a read-only mount read-write (the Sentry alone guarded it), and its writes then reach
 * the host. Through a view the host kernel answers every write with EROFS, whatever the sandbox
 * remounts on its side, under every runtime (decision 0002).
 */
export async function createReadOnlyView(
  docker: Docker,
  name: string,
  source: string,
  labels: Record<string, string>,
): Promise<void> {
  await docker.createVolume({
    Name: name,
    Driver: "local",
    DriverOpts: { type: "none", device: source, o: "bind,ro" },
    Labels: labels,
  });
}

/** The host directory behind a named volume, when the engine's local driver keeps it in a plain directory. */
export async function plainVolumeDirectory(docker: Docker, name: string): Promise<string | undefined> {
  const volume = (await docker.getVolume(name).inspect()) as {
    Driver: string;
    Mountpoint: string;
    Options?: Record<string, string> | null;
  };
  // A local volume with options (nfs, tmpfs, a bind) is only mounted while a container uses it:
  // its directory is empty until then, so a view of it would show nothing.
  if (volume.Driver !== "local" || Object.keys(volume.Options ?? {}).length > 0) return undefined;
  return volume.Mountpoint;
}
