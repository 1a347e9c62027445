import { posix } from "node:path";
import { Errors, PaddockError } from "@paddock/common";
import type Docker from "dockerode";
import type { WorkloadSpec } from "../runtime.js";
import { succeeds } from "./succeeds.js";

type Mount = NonNullable<NonNullable<Docker.ContainerCreateOptions["HostConfig"]>["Mounts"]>[number];

const ownerLabel = "paddock.volume-owner";
const creatorLabel = "paddock.volume-created-by";

/**
 * Docker mounts for a sandbox's volumes. Host paths have already been checked against the
 * operator's allow-list; named volumes are created when asked, labelled with the sandbox that
 * must delete them.
 */
export async function mountsFor(docker: Docker, spec: WorkloadSpec): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const volume of spec.volumes) {
    const readOnly = volume.readOnly ?? false;
    if (volume.host) {
      const source = volume.subPath ? posix.join(volume.host.path, volume.subPath) : volume.host.path;
      mounts.push({ Type: "bind", Source: source, Target: volume.mountPath, ReadOnly: readOnly });
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
      mounts.push({ Type: "volume", Source: name, Target: volume.mountPath, ReadOnly: readOnly });
    }
  }
  return mounts;
}

/** Removes the named volumes this sandbox created with deleteOnSandboxTermination. */
export async function removeOwnedVolumes(docker: Docker, sandboxId: string): Promise<void> {
  const { Volumes } = await docker.listVolumes({ filters: { label: [`${ownerLabel}=${sandboxId}`] } });
  for (const volume of Volumes ?? []) {
    await docker
      .getVolume(volume.Name)
      .remove()
      .catch(() => undefined);
  }
}

/** Removes every volume a sandbox's create made: a create that fails leaves none behind. */
export async function removeVolumesCreatedBy(docker: Docker, sandboxId: string): Promise<void> {
  const { Volumes } = await docker.listVolumes({ filters: { label: [`${creatorLabel}=${sandboxId}`] } });
  for (const volume of Volumes ?? []) {
    await docker
      .getVolume(volume.Name)
      .remove()
      .catch(() => undefined);
  }
}
