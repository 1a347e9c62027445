import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DiskQuotas } from "../src/docker/disk-quota.js";
import { bashIn, openTestStack, type TestStack, testImage } from "../src/testing/index.js";

const image = { uri: testImage };
const entrypoint = ["sleep", "infinity"];
const mebibyte = 2 ** 20;
/** The host's loop devices whose backing file is `path` (deleted or not). */
const loopDevicesOf = (path: string) =>
  execFileSync("losetup", ["--list", "--noheadings", "--output", "NAME,BACK-FILE"], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(` ${path}`));

describe.each(["gvisor", "runc"] as const)("per-sandbox disk quota under %s", (secure) => {
  let t: TestStack;
  const diskImage = (id: string) => join(resolve(t.config.server.data_dir), "disks", `${id}.ext4`);
  /** Host bytes the sandbox's disk takes (its image is sparse). */
  const hostBytes = (id: string) => statSync(diskImage(id)).blocks * 512;

  beforeAll(async () => {
    t = await openTestStack({ secure, config: { docker: { default_disk: "48Mi" } } });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("writing past the configured default fails inside the sandbox, and the host gives no more", async () => {
    const sandbox = await t.stack.sandboxes.create({ image, entrypoint });
    const fill = await bashIn(sandbox.id, "dd if=/dev/zero of=/root/fill bs=1M count=200 2>&1; echo exit=$?");
    expect(fill.output).toContain("No space left on device");
    expect(fill.output).not.toContain("exit=0");
    expect(hostBytes(sandbox.id)).toBeLessThanOrEqual(48 * mebibyte);
    expect((await t.stack.sandboxes.get(sandbox.id)).status.state).toBe("Running");
    expect(loopDevicesOf(diskImage(sandbox.id))).toHaveLength(1);
    // The quota's filesystem took the layer directory's place with the engine's files only.
    const upper = execFileSync("docker", ["inspect", "-f", "{{.GraphDriver.Data.UpperDir}}", sandbox.id], {
      encoding: "utf8",
    }).trim();
    expect(readdirSync(dirname(upper))).toEqual(expect.arrayContaining(["diff", "link", "lower", "work"]));
    expect(readdirSync(dirname(upper))).not.toContain("lost+found");
    await t.stack.sandboxes.delete(sandbox.id);
    expect(existsSync(diskImage(sandbox.id))).toBe(false);
    // The loop device went with the engine's unmount: none is left bound to the deleted image.
    expect(loopDevicesOf(diskImage(sandbox.id))).toEqual([]);
  });

  test("resourceLimits.ephemeral-storage sets the quota; a bad one is a 400", async () => {
    const sandbox = await t.stack.sandboxes.create({
      image,
      entrypoint,
      resourceLimits: { "ephemeral-storage": "128Mi" },
    });
    // More than the default fits...
    const fits = await bashIn(sandbox.id, "dd if=/dev/zero of=/root/a bs=1M count=64 2>&1; echo exit=$?");
    expect(fits.output).toContain("exit=0");
    // ...but not more than asked for.
    const past = await bashIn(sandbox.id, "dd if=/dev/zero of=/root/b bs=1M count=100 2>&1; echo exit=$?");
    expect(past.output).toContain("No space left on device");
    expect(hostBytes(sandbox.id)).toBeLessThanOrEqual(128 * mebibyte);
    await t.stack.sandboxes.delete(sandbox.id);

    for (const quantity of ["lots", "1Ki", "2Pi"]) {
      await expect(
        t.stack.sandboxes.create({ image, entrypoint, resourceLimits: { "ephemeral-storage": quantity } }),
      ).rejects.toMatchObject({ code: "invalid_request", status: 400 });
    }
  });
});

test("a disk left half-attached by a server stopped mid-create is released without error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "paddock-disks-"));
  try {
    const image = join(dir, "sbx-interrupted.ext4");
    const staging = `${image}.staging`;
    execFileSync("truncate", ["-s", "32M", image]);
    execFileSync("mkfs.ext4", ["-q", "-F", image]);
    mkdirSync(staging);
    execFileSync("mount", ["-o", "loop", image, staging]);
    await new DiskQuotas(dir).release("sbx-interrupted");
    expect(readFileSync("/proc/mounts", "utf8")).not.toContain(staging);
    expect([existsSync(image), existsSync(staging)]).toEqual([false, false]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
