import { snapshotInstanceLabel } from "../docker/snapshot-image.js";
import type { RuntimeStack } from "../stack.js";
import { testDocker } from "./docker-exec.js";

/**
 * Snapshot images of a server instance still in the engine. Staging commits carry their
 * sandbox's `paddock.instance` label; snapshot images carry their own.
 */
export async function snapshotImagesOf(instance: string): Promise<string[]> {
  const labelled = async (label: string) =>
    (await testDocker.listImages({ filters: { label: [label] } })).flatMap((image) =>
      (image.RepoTags ?? []).filter((tag) => tag.startsWith("paddock-snapshot")),
    );
  return [
    ...(await labelled(`${snapshotInstanceLabel}=${instance}`)),
    ...(await labelled(`paddock.instance=${instance}`)),
  ].sort();
}

/** Deletes every snapshot the stack knows that is not being captured; returns those that are. */
export async function deleteSnapshots(stack: RuntimeStack): Promise<Set<string>> {
  const { items } = await stack.snapshots.list({ pageSize: 10_000 });
  const capturing = new Set<string>();
  for (const snapshot of items) {
    if (snapshot.status.state === "Creating") capturing.add(`paddock-snapshot:${snapshot.id}`);
    else await stack.snapshots.delete(snapshot.id);
  }
  return capturing;
}

/**
 * After the stack closed: removes the instance's snapshot images, and fails naming any that
 * deleting its snapshots should have removed (a capture still running at close is expected).
 */
export async function removeLeftoverSnapshotImages(instance: string, capturing: Set<string>): Promise<void> {
  const leftovers = await snapshotImagesOf(instance);
  for (const tag of leftovers)
    await testDocker
      .getImage(tag)
      .remove({ force: true })
      .catch(() => undefined);
  const unexpected = leftovers.filter((tag) => !capturing.has(tag));
  if (unexpected.length) throw new Error(`snapshot images left behind: ${unexpected.join(", ")}`);
}
