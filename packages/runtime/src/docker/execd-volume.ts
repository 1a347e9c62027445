import { setTimeout as sleep } from "node:timers/promises";
import { EXECD_MOUNT } from "@paddock/common";
import type Docker from "dockerode";
import { RuntimeStartError } from "../runtime.js";
import { succeeds } from "./existence-check.js";
import { createReadOnlyView } from "./read-only-view.js";

/** A fill that has held the lock this long belonged to a process that died mid-fill. */
const staleLockMs = 120_000;

/**
 * One volume holding execd, shared by every sandbox: the same files for all, so the Node
 * binary's pages are shared in memory. Named after the execd image id, so a rebuilt image gets a
 * fresh volume while running sandboxes keep theirs. Sandboxes never mount the volume itself,
 * only a read-only view of it: one sandbox writing execd would rewrite the daemon
 * of every later sandbox on the engine, so the host, not the sandbox's runtime, refuses writes.
 *
 * Servers (and test suites) on one engine may start together. The volume and its view are
 * created only while holding a lock — a never-started container with a fixed name, which the
 * engine lets exist once — so nobody sees a half-filled volume or fills one twice.
 *
 * Returns the name of the view, the volume sandboxes mount.
 */
export async function ensureExecdVolume(docker: Docker, execdImage: string): Promise<string> {
  const image = await docker
    .getImage(execdImage)
    .inspect()
    .catch(() => undefined);
  if (!image) {
    throw new RuntimeStartError(
      `the execd image ${execdImage} is missing; build it with \`npm run image -w @paddock/execd\` (make setup does) or set runtime.execd_image`,
    );
  }
  const base = `paddock-execd-${image.Id.replace(/^sha256:/, "").slice(0, 16)}`;
  // Not `base` itself: servers before the view mounted that volume into sandboxes directly, and
  // under gVisor a sandbox could have written it.
  const name = `${base}-files`;
  const view = `${base}-ro`;
  const lock = docker.getContainer(`${base}-filling`);
  for (;;) {
    const holder = await lock.inspect().catch(() => undefined);
    if (holder) {
      if (Date.now() - Date.parse(holder.Created) > staleLockMs) {
        // The view is made last: with one, the fill finished and only the lock was left over.
        if (!(await succeeds(docker.getVolume(view).inspect())))
          await docker
            .getVolume(name)
            .remove({ force: true })
            .catch(() => undefined);
        await lock.remove({ force: true }).catch(() => undefined);
      } else {
        await sleep(100);
      }
      continue;
    }
    // No fill in progress: a view that exists now is of a complete volume (it is made last).
    if (await succeeds(docker.getVolume(view).inspect())) return view;
    const acquired = await docker
      .createContainer({
        name: `${base}-filling`,
        Image: execdImage,
        // Never started: it exists only to hold the name.
        Entrypoint: [`${EXECD_MOUNT}/bin/tini`],
        Labels: { "paddock.managed": "true", "paddock.role": "execd-volume-lock" },
        HostConfig: { NetworkMode: "none" },
      })
      .then(
        () => true,
        (error: { statusCode?: number }) => {
          if (error.statusCode === 409) return false;
          throw error;
        },
      );
    if (!acquired) continue;
    try {
      if (!(await succeeds(docker.getVolume(name).inspect())))
        await fillVolume(docker, execdImage, name, image.Id);
      const { Mountpoint } = (await docker.getVolume(name).inspect()) as { Mountpoint: string };
      await createReadOnlyView(docker, view, Mountpoint, {
        "paddock.managed": "true",
        "paddock.execd-image": image.Id,
      });
    } finally {
      await lock.remove({ force: true }).catch(() => undefined);
    }
    return view;
  }
}

async function fillVolume(docker: Docker, execdImage: string, name: string, imageId: string): Promise<void> {
  // Docker copies an image's files into an empty named volume mounted over them, so one
  // short-lived container of the execd image fills the volume.
  await docker.createVolume({
    Name: name,
    Labels: { "paddock.managed": "true", "paddock.execd-image": imageId },
  });
  const filler = await docker.createContainer({
    Image: execdImage,
    Entrypoint: [`${EXECD_MOUNT}/bin/tini`, "--version"],
    Cmd: [],
    Labels: { "paddock.managed": "true", "paddock.role": "execd-volume" },
    HostConfig: { Mounts: [{ Type: "volume", Source: name, Target: EXECD_MOUNT }], NetworkMode: "none" },
  });
  let status = -1;
  try {
    await filler.start();
    status = ((await filler.wait()) as { StatusCode: number }).StatusCode;
  } finally {
    await filler.remove({ force: true }).catch(() => undefined);
  }
  if (status !== 0) {
    await docker
      .getVolume(name)
      .remove({ force: true })
      .catch(() => undefined);
    throw new RuntimeStartError(`filling the execd volume from ${execdImage} failed (exit ${status})`);
  }
}
