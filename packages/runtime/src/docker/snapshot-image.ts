import { Readable } from "node:stream";
import type Docker from "dockerode";

export const snapshotRepository = "paddock-snapshot";
/** Label on every snapshot image: the server instance that made it, so leftovers can be found. */
export const snapshotInstanceLabel = "paddock.snapshot.instance";

/**
 * Why a commit cannot capture a sandbox's files under this engine runtime, or undefined. runsc
 * 2024 keeps a sandbox's root filesystem changes in a filestore file of its own overlay unless
 * started with `--overlay2=none`; a commit would capture that file and none of the files.
 */
export function snapshotProblem(secureType: string, runtimeArgs: readonly string[]): string | undefined {
  if (secureType !== "gvisor") return undefined;
  if (runtimeArgs.some((arg) => /^--?overlay2=none$/.test(arg))) return undefined;
  return "gVisor keeps this sandbox's file changes inside its own overlay, which a commit cannot read; register runsc with --overlay2=none in the engine's runtime arguments (decision 0120)";
}

/**
 * Captures a sandbox's filesystem as `paddock-snapshot:<snapshotId>` whose configuration is its
 * sandbox's image's own: a commit would also keep the container's environment (the caller's
 * `env` and the execd token), and the engine merges a container's env back into any config
 * given to a commit. So the commit is staged, and the snapshot is that commit's layers loaded
 * under the sandbox image's config. The layers are the engine's own, so nothing is copied.
 */
export async function commitSnapshotImage(
  docker: Docker,
  sandboxId: string,
  snapshotId: string,
  instance: string,
): Promise<string> {
  const container = docker.getContainer(sandboxId);
  const sandboxImage = await docker.getImage((await container.inspect()).Image).inspect();
  const comment = `snapshot ${snapshotId} of sandbox ${sandboxId}`;
  const staging = `${snapshotRepository}-staging:${snapshotId}`;
  await container.commit({ repo: `${snapshotRepository}-staging`, tag: snapshotId, pause: true, comment });
  try {
    const committed = await docker.getImage(staging).inspect();
    const ownConfig = sandboxImage.Config ?? {};
    const config = {
      architecture: committed.Architecture,
      os: committed.Os,
      created: committed.Created,
      comment,
      config: { ...ownConfig, Labels: { ...ownConfig.Labels, [snapshotInstanceLabel]: instance } },
      rootfs: { type: "layers", diff_ids: committed.RootFS.Layers ?? [] },
    };
    const reference = `${snapshotRepository}:${snapshotId}`;
    await loadImage(docker, reference, config);
    return reference;
  } finally {
    await docker
      .getImage(staging)
      .remove()
      .catch(() => undefined);
  }
}

/**
 * Removes the staging commits of snapshots a server of this instance was capturing when it
 * stopped (at start nothing of this instance is being captured). `instanceFilter` is the label
 * filter naming the instance; a commit carries its container's labels.
 */
export async function removeStagingImages(docker: Docker, instanceFilter: string): Promise<void> {
  const staged = await docker.listImages({
    filters: { label: [instanceFilter], reference: [`${snapshotRepository}-staging`] },
  });
  for (const image of staged) {
    await docker
      .getImage(image.Id)
      .remove({ force: true })
      .catch(() => undefined);
  }
}

/**
 * Loads an image whose layers the engine already holds: an archive of its config and manifest
 * alone (the engine reads a layer's file only when it lacks the layer).
 */
async function loadImage(docker: Docker, reference: string, config: object): Promise<void> {
  const layers = (config as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids;
  const manifest = [
    { Config: "config.json", RepoTags: [reference], Layers: layers.map((_, i) => `${i}/layer.tar`) },
  ];
  const archive = tarArchive([
    ["config.json", JSON.stringify(config)],
    ["manifest.json", JSON.stringify(manifest)],
  ]);
  const stream = await docker.loadImage(Readable.from([archive]), { quiet: true });
  const messages = await new Promise<Array<{ error?: string }>>((resolve, reject) =>
    docker.modem.followProgress(stream, (error, output) => (error ? reject(error) : resolve(output))),
  );
  const failure = messages.find((message) => message.error);
  if (failure) throw new Error(`the engine refused the snapshot image: ${failure.error}`);
}

/** A tar archive (ustar) of small regular files with short names. */
function tarArchive(files: Array<[name: string, content: string]>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, text] of files) {
    const content = Buffer.from(text);
    const header = Buffer.alloc(512);
    const field = (offset: number, value: string) => header.write(value, offset, "ascii");
    field(0, name);
    field(100, "0000644\0");
    field(108, "0000000\0");
    field(116, "0000000\0");
    field(124, `${content.length.toString(8).padStart(11, "0")}\0`);
    field(
      136,
      `${Math.floor(Date.now() / 1000)
        .toString(8)
        .padStart(11, "0")}\0`,
    );
    field(148, "        ");
    field(156, "0");
    field(257, "ustar\0");
    field(263, "00");
    const checksum = header.reduce((sum, byte) => sum + byte, 0);
    field(148, `${checksum.toString(8).padStart(6, "0")}\0 `);
    blocks.push(header, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
