import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXECD_MOUNT } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Sandbox } from "../model.js";
import {
  bashIn,
  digestOfTree,
  openTestStack,
  type TestStack,
  testDocker,
  testImage,
} from "../testing/index.js";
import { NetworkFiles } from "./network-files.js";

/**
 * What a sandbox can write, attacked from inside as root would (decision 0002, "Mounts"): nothing
 * it writes may reach another sandbox, the host's trusted components, or the host's disk beyond
 * its quota. Read-only must hold for root in a new user namespace too: under gVisor such a root
 * may remount what the Sentry alone guards.
 */

/** Remounts `path` read-write as root in a new user and mount namespace, then writes into it. */
const remountAndWrite = (path: string, file = `${path}/x`) =>
  `unshare -Urm sh -c 'mount -o remount,rw ${path} 2>&1; echo owned > ${file} && echo WROTE'`;

/** The host directory behind a sandbox's mount at `target`, through the engine's record of it. */
async function hostSourceOf(sandboxId: string, target: string): Promise<string> {
  const inspected = await testDocker.getContainer(sandboxId).inspect();
  const mount = inspected.Mounts.find((candidate) => candidate.Destination === target);
  if (!mount?.Source) throw new Error(`no mount at ${target}`);
  return mount.Source;
}

/** Bytes the engine holds of a container's output; a file rotated away while counting counts as gone. */
function engineLogBytes(directory: string): number {
  return readdirSync(directory)
    .filter((name) => name.includes("-json.log"))
    .reduce((sum, name) => sum + (statSync(join(directory, name), { throwIfNoEntry: false })?.size ?? 0), 0);
}

describe.each(["gvisor", "runc"] as const)("what a sandbox can write, under %s", (secure) => {
  let t: TestStack;
  let attacker: Sandbox;
  const hostDirectory = mkdtempSync(join(tmpdir(), "paddock-ro-host-"));
  const claim = `paddock-test-claim-${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    writeFileSync(join(hostDirectory, "data.txt"), "the operator's\n");
    t = await openTestStack({ secure, config: { docker: { allowed_host_paths: [hostDirectory] } } });
    attacker = await t.stack.sandboxes.create({
      image: { uri: testImage },
      entrypoint: ["sleep", "infinity"],
      volumes: [
        { name: "host", host: { path: hostDirectory }, mountPath: "/host", readOnly: true },
        {
          name: "claim",
          pvc: { claimName: claim, deleteOnSandboxTermination: true },
          mountPath: "/claim",
          readOnly: true,
        },
      ],
    });
  });

  afterAll(async () => {
    await t?.dispose();
    rmSync(hostDirectory, { recursive: true, force: true });
  });

  test("the execd files every sandbox runs stay as they are, for root in a new user namespace too", async () => {
    const source = await hostSourceOf(attacker.id, EXECD_MOUNT);
    const before = digestOfTree(source);
    const attack = await bashIn(
      attacker.id,
      `${remountAndWrite(EXECD_MOUNT)}; unshare -Urm sh -c 'mount -o remount,rw ${EXECD_MOUNT} 2>/dev/null; echo "process.exit(1)" >> ${EXECD_MOUNT}/execd.js && echo WROTE'`,
    );
    expect(attack.output).not.toContain("WROTE");
    expect(digestOfTree(source)).toBe(before);
    // A sandbox created afterwards runs the daemon as it was built.
    const next = await t.stack.sandboxes.create({
      image: { uri: testImage },
      entrypoint: ["sleep", "infinity"],
    });
    const seen = await bashIn(next.id, `ls ${EXECD_MOUNT}/x 2>&1; tail -c 100 ${EXECD_MOUNT}/execd.js`);
    expect(seen.output).toContain("No such file");
    expect(seen.output).not.toContain("process.exit(1)");
  });

  test("read-only host and named volumes are read-only on the host", async () => {
    const claimDirectory = await hostSourceOf(attacker.id, "/claim");
    const attack = await bashIn(attacker.id, `${remountAndWrite("/host")}; ${remountAndWrite("/claim")}`);
    expect(attack.output).not.toContain("WROTE");
    expect(readdirSync(hostDirectory)).toEqual(["data.txt"]);
    expect(existsSync(join(claimDirectory, "x"))).toBe(false);
    // …and still readable.
    expect((await bashIn(attacker.id, "cat /host/data.txt")).output).toBe("the operator's\n");
  });

  test("every read-only mount backed by the host stays read-only when remounted", async () => {
    // Host-backed: under gVisor the gofer's 9p mounts (the Sentry's own proc, sys and tmpfs hold
    // nothing of the host's); under runc every mount, the kernel's locks included.
    const table = await bashIn(attacker.id, "cat /proc/self/mountinfo");
    const readOnly = table.output
      .trim()
      .split("\n")
      .map((line) => line.split(" "))
      .filter((fields) => fields[5]?.split(",").includes("ro"))
      .filter((fields) => secure === "runc" || fields[fields.indexOf("-") + 1] === "9p")
      .map((fields) => fields[4] ?? "");
    expect(readOnly).toEqual(expect.arrayContaining([EXECD_MOUNT, "/host", "/claim"]));
    for (const path of readOnly) {
      const attack = await bashIn(attacker.id, remountAndWrite(path, `${path}/paddock-probe`));
      expect(attack.output, path).not.toContain("WROTE");
    }
  });

  test("its hosts, hostname and resolv.conf are its own and small, and its output to the engine is capped", async () => {
    const inspected = await testDocker.getContainer(attacker.id).inspect();
    const engineDirectory = join("/var/lib/docker/containers", inspected.Id);
    const engineHostsSize = statSync(join(engineDirectory, "hosts")).size;
    const flood = await bashIn(
      attacker.id,
      "head -c 20M /dev/zero >> /etc/hosts; echo hosts=$?; head -c 60M /dev/zero > /proc/1/fd/1; echo logs=$?",
      120_000,
    );
    expect(flood.output).toContain("hosts=1"); // No space left: 1 MiB is all it gets.
    expect(statSync(await hostSourceOf(attacker.id, "/etc/hosts")).size).toBeLessThanOrEqual(2 ** 20);
    expect(statSync(join(engineDirectory, "hosts")).size).toBe(engineHostsSize);
    // The engine copies the output behind the writer and rotates as it goes: count once it settles.
    let logBytes = engineLogBytes(engineDirectory);
    for (let settled = 0; settled < 2; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = engineLogBytes(engineDirectory);
      settled = now === logBytes ? settled + 1 : 0;
      logBytes = now;
    }
    expect(logBytes).toBeLessThan(11 * 2 ** 20);
    // The sandbox still names itself and resolves its own name.
    const names = await bashIn(attacker.id, "hostname; getent hosts $(hostname)");
    expect(names.output).toContain(attacker.id);
    expect(names.output).toMatch(/^\d+\.\d+\.\d+\.\d+\s+/m);
  });
});

describe("the egress sidecar, under runc", () => {
  let t: TestStack;

  beforeAll(async () => {
    t = await openTestStack({ secure: "runc" });
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("reads none of the network files its sandbox writes", async () => {
    const sandbox = await t.stack.sandboxes.create({
      image: { uri: testImage },
      entrypoint: ["sleep", "infinity"],
      networkPolicy: { defaultAction: "deny", egress: [{ action: "allow", target: "example.com" }] },
    });
    await bashIn(
      sandbox.id,
      "echo 'nameserver 10.213.0.1' > /etc/resolv.conf; echo '10.213.0.1 example.com' >> /etc/hosts",
    );
    const sidecar = await testDocker.getContainer(`${sandbox.id}-egress`).inspect();
    for (const file of [sidecar.ResolvConfPath, sidecar.HostsPath]) {
      expect(readFileSync(file, "utf8"), file).not.toContain("10.213.0.1");
    }
  });
});

describe("network files of sandboxes removed behind the runtime's back", () => {
  test("are released once past their grace, and only when their container is gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "paddock-network-files-"));
    const files = new NetworkFiles(dir);
    try {
      await files.create("sbx-gone", "sbx-gone");
      await files.create("sbx-alive", "sbx-alive");
      const mounted = () =>
        readFileSync("/proc/mounts", "utf8")
          .split("\n")
          .filter((line) => line.includes(dir));
      expect(mounted()).toHaveLength(2);
      await files.releaseOrphans(async () => false, 60_000);
      expect(mounted()).toHaveLength(2); // too young: a create may be on its way
      await files.releaseOrphans(async (sandboxId) => sandboxId === "sbx-alive", 0);
      expect(mounted()).toHaveLength(1);
      expect(readdirSync(dir)).toEqual(["sbx-alive"]);
    } finally {
      await files.release("sbx-gone");
      await files.release("sbx-alive");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
