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
  let volume: string | undefined;

  afterAll(async () => {
    if (volume)
      await docker
        .getVolume(volume)
        .remove({ force: true })
        .catch(() => undefined);
    await docker
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  });

  it("is filled once and complete for every server that starts at the same moment", async () => {
    await buildTestImage(image, `FROM paddock/execd:0.1.0\nLABEL paddock.test=${image}\n`);
    const names = await Promise.all([1, 2, 3, 4].map(() => ensureExecdVolume(docker, image)));
    volume = names[0];
    expect(new Set(names).size).toBe(1);
    // Every caller returned only once the volume was complete: execd's files are all there.
    const { stdout } = await run("docker", [
      ...["run", "--rm", "--network", "none", "-v", `${volume}:/v:ro`, "--entrypoint", "/v/bin/tini"],
      ...[image, "--version"],
    ]);
    expect(stdout).toContain("tini");
    const locks = await docker.listContainers({ all: true, filters: { name: [`${volume}-filling`] } });
    expect(locks).toHaveLength(0);
  });
});
