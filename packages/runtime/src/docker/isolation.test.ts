import { execFileSync } from "node:child_process";
import { connect, createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Sandbox } from "../model.js";
import { bashIn, openTestStack, type TestStack, testDocker, testImage } from "../testing/index.js";

/**
 * Capabilities a sandbox keeps: CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP
 * NET_BIND_SERVICE, and under runc SETFCAP (root mapped into an isolated session's user
 * namespace, decision 0090).
 */
const expectedCapabilities = { gvisor: "00000000000005fb", runc: "00000000800005fb" };

function listen(host: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((socket) => {
      socket.on("error", () => undefined); // peers killed by `timeout` reset the connection
      socket.end("hello\n");
    });
    server.listen(0, host, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

/** Exit 0 when a TCP connection to host:port opens within 3 s, from inside the container. */
const connectScript = (host: string, port: number) =>
  `timeout 3 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null && echo open || echo closed`;

describe.each(["gvisor", "runc"] as const)("sandbox isolation under %s", (secure) => {
  let t: TestStack;
  let limited: Sandbox;
  let neighbour: Sandbox;
  let gateway: string;

  beforeAll(async () => {
    t = await openTestStack({ secure });
    [limited, neighbour] = await Promise.all([
      t.stack.sandboxes.create({
        image: { uri: testImage },
        entrypoint: ["sleep", "infinity"],
        resourceLimits: { cpu: "500m", memory: "256Mi" },
      }),
      t.stack.sandboxes.create({ image: { uri: testImage }, entrypoint: ["sleep", "infinity"] }),
    ]);
    const inspected = await testDocker.getContainer(limited.id).inspect();
    gateway = inspected.NetworkSettings.Networks[t.config.docker.network]?.Gateway ?? "";
    expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  afterAll(async () => {
    await t?.dispose();
  });

  test("runs under the configured engine runtime", async () => {
    const inspected = await testDocker.getContainer(limited.id).inspect();
    expect(inspected.HostConfig.Runtime).toBe(secure === "gvisor" ? "runsc" : "runc");
    const kernel = await bashIn(limited.id, "cat /proc/version");
    // gVisor presents its own kernel version; runc shares the host kernel.
    if (secure === "gvisor") expect(kernel.output).toContain("4.4.0");
    else expect(kernel.output).not.toContain("4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016");
  });

  test("drops capabilities, is not privileged and cannot gain privileges", async () => {
    const status = await bashIn(limited.id, "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status");
    expect(status.output).toMatch(new RegExp(`CapEff:\\s+${expectedCapabilities[secure]}`));
    expect(status.output).toMatch(new RegExp(`CapBnd:\\s+${expectedCapabilities[secure]}`));
    if (secure === "runc") expect(status.output).toMatch(/NoNewPrivs:\s+1/);
    // Privileged operations fail: mounting needs CAP_SYS_ADMIN, raw sockets need CAP_NET_RAW.
    const mount = await bashIn(limited.id, "mount -t tmpfs none /mnt 2>&1; echo rc=$?");
    expect(mount.output).toMatch(/rc=[1-9]/);
    const inspected = await testDocker.getContainer(limited.id).inspect();
    expect(inspected.HostConfig.Privileged).toBe(false);
    expect(inspected.HostConfig.SecurityOpt).toContain("no-new-privileges:true");
  });

  test("an isolated session's namespaces can be made; under runc no others (decision 0090)", async () => {
    const probe = await bashIn(
      limited.id,
      "unshare -Urn true 2>/dev/null; echo net=$?; unshare -Uri true 2>/dev/null; echo ipc=$?; unshare -Urmpf true; echo session=$?",
    );
    expect(probe.output).toMatch(/session=0/);
    // runc: seccomp keeps network and IPC namespaces, and the host kernel's code behind them, out
    // of reach. gVisor's namespaces are its own kernel's, so it allows them all.
    const others = secure === "runc" ? /net=[1-9]\nipc=[1-9]/ : /net=0\nipc=0/;
    expect(probe.output).toMatch(others);
  });

  test("applies memory, CPU and process limits", async () => {
    if (secure === "runc") {
      const cgroups = await bashIn(
        limited.id,
        "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us /sys/fs/cgroup/pids/pids.max",
      );
      const [memory, quota, period, pids] = cgroups.output.trim().split("\n").map(Number);
      expect(memory).toBe(256 * 2 ** 20);
      expect((quota ?? 0) / (period ?? 1)).toBe(0.5);
      expect(pids).toBe(t.config.docker.pids_limit);
      // Going over the memory limit kills the offending process, not the sandbox.
      const hog = await bashIn(
        limited.id,
        "head -c 600M /dev/zero | tail > /dev/null; echo rc=${PIPESTATUS[1]}",
        60_000,
      );
      expect(hog.output).toContain("rc=137");
      expect((await bashIn(limited.id, "echo alive")).output).toBe("alive\n");
    } else {
      // gVisor sizes its kernel from the limits it is given.
      const meminfo = await bashIn(limited.id, "grep MemTotal /proc/meminfo");
      expect(meminfo.output).toMatch(/MemTotal:\s+262144 kB/);
      const inspected = await testDocker.getContainer(limited.id).inspect();
      expect(inspected.HostConfig.NanoCpus).toBe(500_000_000);
      // 256Mi of memory allows 32 guest processes.
      expect(inspected.HostConfig.Ulimits).toContainEqual({ Name: "nproc", Soft: 32, Hard: 32 });
      expect((await bashIn(limited.id, "ulimit -u")).output).toBe("32\n");
    }
  });

  test("cannot reach other sandboxes", async () => {
    const target = await t.stack.sandboxes.target(neighbour.id, 44772);
    // The host reaches the neighbour's execd port (the connection is possible at all)…
    const fromHost = await new Promise<boolean>((resolve) => {
      const socket = connect(target.port, target.host);
      socket.on("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    expect(fromHost).toBe(true);
    // …but another sandbox cannot.
    const fromSandbox = await bashIn(limited.id, connectScript(target.host, target.port));
    expect(fromSandbox.output.trim()).toBe("closed");
  });

  test("cannot reach the host's own services or the metadata address", async () => {
    // Stand in for a cloud metadata service: the address on this host's loopback, with a listener.
    const metadataAddress = "169.254.169.254";
    const hadAddress = execFileSync("ip", ["-4", "addr", "show", "dev", "lo"])
      .toString()
      .includes(metadataAddress);
    if (!hadAddress) execFileSync("ip", ["addr", "add", `${metadataAddress}/32`, "dev", "lo"]);
    const host = await listen("0.0.0.0");
    try {
      // A plain container on Docker's default bridge reaches both listeners, so they are reachable at all.
      const control = await testDocker.createContainer({
        Image: testImage,
        Cmd: [
          "bash",
          "-c",
          `${connectScript("172.17.0.1", host.port)}; ${connectScript(metadataAddress, host.port)}`,
        ],
        Labels: { "paddock.test": "isolation" },
      });
      await control.start();
      await control.wait();
      const controlLogs = (await control.logs({ stdout: true, stderr: true })) as unknown as Buffer;
      await control.remove({ force: true });
      expect(controlLogs.toString().match(/open/g)).toHaveLength(2);

      for (const address of [gateway, "172.17.0.1", metadataAddress]) {
        expect((await bashIn(limited.id, connectScript(address, host.port))).output.trim(), address).toBe(
          "closed",
        );
      }
    } finally {
      host.server.close();
      if (!hadAddress) execFileSync("ip", ["addr", "del", `${metadataAddress}/32`, "dev", "lo"]);
    }
  });
});
