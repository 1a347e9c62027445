import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { buildTestImage } from "../testing/test-image.js";
import { ensureExecdVolume } from "./execd-volume.js";

const run = promisify(execFile);
const docker = new Docker();

describe("the shared execd volume", () => {
  // An image of its own (the execd image plus a label) gets a volume of its own, so this test
  // never touches the volume other suites' sandboxes are using.
  const image = `paddock/execd-volume-test:${randomBytes(4).toString("hex")}`;
  let imageId = "";

  afterAll(async () => {
    // The view first, then the volume it shows.
    const { Volumes } = await docker.listVolumes({ filters: { label: [`paddock.execd-image`] } });
    const ours = (Volumes ?? []).filter((candidate) => candidate.Labels["paddock.execd-image"] === imageId);
    for (const suffix of ["-ro", "-files"])
      for (const candidate of ours.filter(({ Name }) => Name.endsWith(suffix)))
        await docker
          .getVolume(candidate.Name)
          .remove({ force: true })
          .catch(() => undefined);
    await docker
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  });

  it("is filled once and complete for every server that starts at the same moment", async () => {
    await buildTestImage(image, `FROM paddock/execd:0.1.0\nLABEL paddock.test=${image}\n`);
    imageId = (await docker.getImage(image).inspect()).Id;
    const names = await Promise.all([1, 2, 3, 4].map(() => ensureExecdVolume(docker, image)));
    const volume = names[0];
    expect(new Set(names).size).toBe(1);
    // Every caller returned only once the volume was complete: execd's files are all there.
    const { stdout } = await run("docker", [
      ...["run", "--rm", "--network", "none", "-v", `${volume}:/v:ro`, "--entrypoint", "/v/bin/tini"],
      ...[image, "--version"],
    ]);
    expect(stdout).toContain("tini");
    // What sandboxes mount is read-only on the host: even a container that mounts it read-write cannot write.
    const write = await run("docker", [
      ...["run", "--rm", "--network", "none", "-v", `${volume}:/v`, "--entrypoint", "/v/bin/busybox"],
      ...[image, "touch", "/v/x"],
    ]).catch((error: { stderr: string }) => error);
    expect((write as { stderr?: string }).stderr).toContain("Read-only file system");
    const locks = await docker.listContainers({ all: true, filters: { name: [`${volume}-filling`] } });
    expect(locks).toHaveLength(0);
  });
});
