import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { join } from "node:path";
import {
  EGRESS_PORT,
  EGRESS_TOKEN_HEADER,
  EXECD_MOUNT,
  EXECD_PORT,
  EXECD_TOKEN_HEADER,
} from "@paddock/common";
import { digestOfTree, testDocker, testImage } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type ProbeResult, type Probes, parseProbes, probeScript } from "./probe-script.js";

/**
 * Attacks from inside a sandbox, through a real server: sandboxes made through the control plane,
 * commands run through execd as a customer's would, the server listening on every address of the
 * host, and the egress sidecar in the attacker's network namespace. Every escape or reach asserted
 * to fail, under gVisor and runc (DESIGN.md "Trust boundaries", decision 0002).
 */

const repositoryRoot = join(import.meta.dirname, "../..");

/** The first column of decision 0002's mount table: the mount points each row covers. */
function documentedMountPoints(): string[] {
  const decision = readFileSync(
    join(repositoryRoot, "docs/decisions/0002-secure-runtime-and-hardening.md"),
    "utf8",
  );
  const rows = decision.slice(decision.indexOf("## Mounts")).split("\n");
  const points: string[] = [];
  for (const row of rows.filter((line) => line.startsWith("| "))) {
    const firstCell = row.split("|")[1]?.trim() ?? "";
    // Rows naming their mounts start with them (`/dev`, `/dev/pts`, …); "host volumes (…)" rows name none.
    const leading = /^(`\/[^`]*`(,\s*)?)+/.exec(firstCell)?.[0] ?? "";
    points.push(...[...leading.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? ""));
  }
  return points;
}

/** Kernel views whose masked or per-controller entries below them the row covers too. */
const subtreeRows = ["/proc", "/sys", "/dev"];

interface MountEntry {
  point: string;
  readOnly: boolean;
  fsType: string;
}

function parseMountInfo(text: string): MountEntry[] {
  return text
    .trim()
    .split("\n")
    .map((line) => line.split(" "))
    .map((fields) => ({
      point: fields[4] ?? "",
      readOnly: (fields[5] ?? "").split(",").includes("ro"),
      fsType: fields[fields.indexOf("-") + 1] ?? "",
    }));
}

/**
 * The host's addresses: every interface node sees, and those of interfaces that are down (node
 * leaves them out: docker0 without containers), from `ip`. Loopback is the sandbox's own inside.
 */
function hostAddresses(): string[] {
  const fromNode = Object.values(networkInterfaces())
    .flat()
    .filter((address) => address !== undefined && !address.internal)
    .map((address) => address?.address ?? "");
  const interfaces = JSON.parse(execFileSync("ip", ["-j", "addr", "show"]).toString()) as Array<{
    addr_info: Array<{ local: string; scope: string }>;
  }>;
  const fromIp = interfaces
    .flatMap((link) => link.addr_info)
    .filter((address) => address.scope === "global")
    .map((address) => address.local);
  return [...new Set([...fromNode, ...fromIp])].filter((address) => !address.startsWith("fe80"));
}

function listen(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((socket) => {
      socket.on("error", () => undefined);
      socket.end("hello\n");
    });
    server.listen(0, "0.0.0.0", () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

/** Whether this host opens a TCP connection to host:port within 2 s. */
function hostReaches(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    const done = (reached: boolean) => {
      socket.destroy();
      resolve(reached);
    };
    socket.on("connect", () => done(true));
    socket.on("timeout", () => done(false));
    socket.on("error", () => done(false));
  });
}

/**
 * Reached means bytes came back: every target here answers an HTTP request (or greets first), so
 * a connect a runtime reports without a peer does not count.
 */
const connectProbe = (host: string, port: number) =>
  `exec 3<>/dev/tcp/${host}/${port} && { printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 2>/dev/null; head -c 64 <&3 | grep -q .; }`;

/** PTRACE_ATTACH through libc; exits 0 only when attached (and then detaches at once). */
const ptraceProbe = (findPid: string) => `python3 - <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = ${findPid}
if libc.ptrace(16, pid, 0, 0) != 0:
    print("pid", pid, os.strerror(ctypes.get_errno())); sys.exit(1)
os.waitpid(pid, 0x40000000)
libc.ptrace(17, pid, 0, 0)
print("attached to", pid)
EOF`;

/** Python expression: the pid of the process running execd (not tini, which names it too). */
const execdPid = `next(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) > 1 and b'execd.js' in open('/proc/%s/cmdline' % p, 'rb').read() and int(p) != os.getpid())`;

const raw = (family: string, protocol: number) =>
  `python3 -c 'import socket; socket.socket(socket.${family}, socket.SOCK_RAW, ${protocol}); print("opened")'`;

/** Rewrites a file with its own content: harmless when it works, so it tests the write alone. */
const rewrite = (file: string) => `v=$(cat ${file}) && printf '%s\\n' "$v" > ${file} && echo WROTE`;

/** A link-local address of this host's, standing in for a metadata service while the suite runs. */
const linkLocalAddress = "169.254.77.77";
let addedLinkLocal = false;

beforeAll(() => {
  const present = execFileSync("ip", ["-4", "addr", "show", "dev", "lo"])
    .toString()
    .includes(`${linkLocalAddress}/`);
  if (!present) execFileSync("ip", ["addr", "add", `${linkLocalAddress}/32`, "dev", "lo"]);
  addedLinkLocal = !present;
});

afterAll(() => {
  if (addedLinkLocal) execFileSync("ip", ["addr", "del", `${linkLocalAddress}/32`, "dev", "lo"]);
});

/** Connects to each target from a container of the engine's default bridge, where no firewall of Paddock's applies. */
async function reachFromPlainContainer(targets: Array<[string, number]>): Promise<Map<string, ProbeResult>> {
  const probes = Object.fromEntries(
    targets.map(([host, port]) => [`${host}:${port}`, connectProbe(host, port)]),
  );
  const container = await testDocker.createContainer({
    Image: testImage,
    Cmd: ["bash", "-c", probeScript(probes, { parallel: true, timeoutSeconds: 4 })],
    Tty: true,
    Labels: { "paddock.test": "inside-attacks" },
    HostConfig: { Runtime: "runc" },
  });
  try {
    await container.start();
    await container.wait();
    const logs = (await container.logs({ stdout: true, stderr: true })) as unknown as Buffer;
    return parseProbes(logs.toString().replaceAll("\r", ""));
  } finally {
    await container.remove({ force: true });
  }
}

const runtimes = [
  {
    name: "gVisor",
    secureRuntime: { type: "gvisor" as const, netstack_runtime: "runsc-netstack" },
    // A sandbox with a network policy runs on runsc with host networking (the sidecar's rules
    // need it); one without, on gVisor's own network stack.
    engine: { attacker: "runsc", neighbour: "runsc-netstack" },
  },
  { name: "runc", secureRuntime: { type: "" as const }, engine: { attacker: "runc", neighbour: "runc" } },
];

describe.each(runtimes)("attacks from inside a sandbox under $name", ({ name, secureRuntime, engine }) => {
  const gvisor = name === "gVisor";
  let t: TestServer;
  let attacker: Sandbox;
  let neighbour: Sandbox;
  let attackerId: string; // the engine's full container id
  let attackerAddress: string;
  let neighbourAddress: string;
  let gateway: string;
  let listener: { server: Server; port: number };
  const policy = {
    defaultAction: "allow" as const,
    egress: [{ action: "deny" as const, target: "203.0.113.0/24" }],
  };

  const run = async (
    sandbox: Sandbox,
    probes: Probes,
    options: { parallel?: boolean; timeoutSeconds?: number } = {},
  ) => {
    const result = await sandbox.commands.run(probeScript(probes, options), {
      timeoutMs: 120_000,
      requestTimeoutMs: 150_000,
    });
    const results = parseProbes(result.stdout);
    expect([...results.keys()].sort()).toEqual(Object.keys(probes).sort());
    return results;
  };
  const refused = (results: Map<string, ProbeResult>, probe: string) => {
    const result = results.get(probe);
    expect(result?.exitCode, `${probe}: ${result?.output}`).not.toBe(0);
  };

  beforeAll(async () => {
    listener = await listen();
    t = await startTestServer({ config: { secure_runtime: secureRuntime, server: { host: "0.0.0.0" } } });
    const connection = { baseUrl: t.url, apiKey: await t.account("attacker@example.com") };
    [attacker, neighbour] = await Promise.all([
      Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600, networkPolicy: policy }),
      Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 }),
    ]);
    const network = t.config.docker.network;
    const [a, b] = await Promise.all([
      testDocker.getContainer(attacker.id).inspect(),
      testDocker.getContainer(neighbour.id).inspect(),
    ]);
    expect([a.HostConfig.Runtime, b.HostConfig.Runtime]).toEqual([engine.attacker, engine.neighbour]);
    attackerId = a.Id;
    attackerAddress = a.NetworkSettings.Networks[network]?.IPAddress ?? "";
    neighbourAddress = b.NetworkSettings.Networks[network]?.IPAddress ?? "";
    gateway = a.NetworkSettings.Networks[network]?.Gateway ?? "";
    expect([attackerAddress, neighbourAddress, gateway].join(" ")).toMatch(
      /^\d+\.\d+\.\d+\.\d+ \d+\.\d+\.\d+\.\d+ \d+\.\d+\.\d+\.\d+$/,
    );
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    listener?.server.close();
  });

  test("every mount the sandbox has is a row of decision 0002's mount table", async () => {
    const documented = documentedMountPoints();
    expect(documented).toEqual(
      expect.arrayContaining(["/", EXECD_MOUNT, "/proc", "/sys", "/dev", "/etc/hosts"]),
    );
    for (const sandbox of [attacker, neighbour]) {
      const mounts = parseMountInfo((await sandbox.commands.run("cat /proc/self/mountinfo")).stdout);
      const undocumented = mounts
        .map((mount) => mount.point)
        .filter(
          (point) =>
            !documented.includes(point) &&
            !subtreeRows.some((row) => documented.includes(row) && point.startsWith(`${row}/`)),
        );
      expect(undocumented, sandbox.id).toEqual([]);
      // The row says read-only: the sandbox sees it so (the host's view under it is tested below).
      expect(mounts.find((mount) => mount.point === EXECD_MOUNT)?.readOnly).toBe(true);
    }
  });

  test("read-only mounts refuse writes, remounts and remounts from new user namespaces; the host's files stay", async () => {
    const inspected = await testDocker.getContainer(attacker.id).inspect();
    const execdSource = inspected.Mounts.find((mount) => mount.Destination === EXECD_MOUNT)?.Source ?? "";
    const execdBefore = digestOfTree(execdSource);
    const mounts = parseMountInfo((await attacker.commands.run("cat /proc/self/mountinfo")).stdout);
    // Host-backed: under gVisor the gofer's (9p); the Sentry's own proc, sys and tmpfs hold nothing
    // of the host's. Under runc every mount is the host kernel's.
    const readOnly = mounts.filter((mount) => mount.readOnly && (!gvisor || mount.fsType === "9p"));
    expect(readOnly.map((mount) => mount.point)).toContain(EXECD_MOUNT);
    const probes: Probes = {};
    readOnly.forEach((mount, index) => {
      // A file of the mount that its mode lets root write, else a new one.
      const file = `$(find ${mount.point} -maxdepth 3 -type f -perm -u+w 2>/dev/null | head -1 | grep . || echo ${mount.point}/paddock-probe)`;
      const attempt = `f=${file}; ${rewrite('"$f"')}`;
      probes[`write-${index}`] = attempt;
      probes[`remount-${index}`] = `mount -o remount,rw ${mount.point} 2>&1; ${attempt}`;
      probes[`userns-remount-${index}`] =
        `unshare -Urm bash -c '${`mount -o remount,rw ${mount.point}; ${attempt}`.replaceAll("'", "'\\''")}'`;
      probes[`pidns-remount-${index}`] =
        `unshare -Urmpf bash -c '${`mount -o remount,rw ${mount.point}; ${attempt}`.replaceAll("'", "'\\''")}'`;
    });
    const results = await run(attacker, probes);
    readOnly.forEach((mount, index) => {
      for (const attack of ["write", "remount", "userns-remount", "pidns-remount"]) {
        const result = results.get(`${attack}-${index}`);
        expect(result?.output, `${attack} ${mount.point}`).not.toContain("WROTE");
      }
    });
    expect(digestOfTree(execdSource)).toBe(execdBefore);
  });

  test("the image's layers, shared with every sandbox of the image, stay as built", async () => {
    const inspected = await testDocker.getContainer(attacker.id).inspect();
    const lowers = String((inspected.GraphDriver.Data as Record<string, string>).LowerDir ?? "").split(":");
    const lowerFile = lowers
      .map((dir) => join(dir, "etc/os-release"))
      .find((file) => statSync(file, { throwIfNoEntry: false }));
    expect(lowerFile).toBeDefined();
    const before = readFileSync(lowerFile ?? "", "utf8");
    const results = await run(attacker, {
      append: "echo pwned >> /etc/os-release && grep -q pwned /etc/os-release",
      "userns-append": "unshare -Urm sh -c 'mount -o remount,rw /; echo pwned2 >> /etc/os-release'",
      "docker-data-root": "ls /var/lib/docker/overlay2",
    });
    // The sandbox changes its own copy (its own layer)…
    expect(results.get("append")?.exitCode).toBe(0);
    refused(results, "docker-data-root");
    // …never the layer the neighbour and every later sandbox of the image read.
    expect(readFileSync(lowerFile ?? "", "utf8")).toBe(before);
    expect((await neighbour.commands.run("cat /etc/os-release")).stdout).toBe(before);
  });

  test("mount, chroot, /proc/sys and sysrq: refused, in new user namespaces too", async () => {
    const swappiness = readFileSync("/proc/sys/vm/swappiness", "utf8").trim();
    const other = String(Number(swappiness) === 60 ? 61 : 60);
    const results = await run(attacker, {
      "mount-tmpfs": "mount -t tmpfs none /mnt",
      "mount-bind": `mount --bind ${EXECD_MOUNT} /mnt`,
      "remount-execd": `mount -o remount,rw ${EXECD_MOUNT} && touch ${EXECD_MOUNT}/pwned`,
      "userns-cgroup-release-agent":
        "unshare -Urm sh -c 'mount -t cgroup -o memory none /mnt && echo /tmp/x > /mnt/release_agent'",
      "userns-devtmpfs-read":
        "unshare -Urm sh -c 'mount -t devtmpfs none /mnt && head -c1 /mnt/mem >/dev/null'",
      "pidns-proc-sys": `unshare -Urmpf sh -c 'mount -t proc proc /mnt && echo ${other} > /mnt/sys/vm/swappiness'`,
      chroot: "chroot / true",
      "sys-hostname": "echo pwned > /proc/sys/kernel/hostname",
      "sys-drop-caches": "echo 3 > /proc/sys/vm/drop_caches",
      "sys-swappiness": `echo ${other} > /proc/sys/vm/swappiness`,
      "userns-sys-swappiness": `unshare -Urm sh -c 'mount -o remount,rw /proc/sys; mount -o remount,rw /proc; echo ${other} > /proc/sys/vm/swappiness'`,
      "pidns-sys-swappiness": `unshare -Urmpf --mount-proc sh -c 'echo ${other} > /proc/sys/vm/swappiness'`,
      sysrq: "echo h > /proc/sysrq-trigger",
      "userns-sysrq": "unshare -Urm sh -c 'mount -o remount,rw /proc; echo h > /proc/sysrq-trigger'",
      // The classic escape: chroot deeper, keep a directory outside, climb out. In a user namespace
      // chroot is allowed; the top it reaches must be the sandbox's own root.
      "userns-chroot-escape": `unshare -Ur python3 - <<'EOF'
import os
os.makedirs("/tmp/jail", exist_ok=True)
os.chroot("/tmp/jail")
for _ in range(64):
    os.chdir("..")
os.chroot(".")
if os.path.exists("/var/lib/docker/containers"): print("reached the host"); raise SystemExit(0)
print("reached", "the sandbox's root" if os.path.exists("${EXECD_MOUNT}/execd.js") else "nothing: still in the jail")
raise SystemExit(1)
EOF`,
    });
    for (const probe of results.keys()) refused(results, probe);
    // runc: the seccomp profile allows chroot only with CAP_SYS_CHROOT, which no sandbox has.
    // gVisor allows it in a user namespace, and keeps the climb inside the new root.
    expect(results.get("userns-chroot-escape")?.output).toContain(
      gvisor ? "still in the jail" : "Operation not permitted",
    );
    expect(readFileSync("/proc/sys/vm/swappiness", "utf8").trim()).toBe(swappiness);
    expect(hostname()).not.toBe("pwned");
  });

  test("the network namespace it shares with the egress sidecar: its settings stay as the host set them", async () => {
    // The sidecar (runc, the host kernel) sits in the attacker's network namespace: read its
    // settings from the host through the sidecar's process.
    const sidecarPid = (await testDocker.getContainer(`${attacker.id}-egress`).inspect()).State.Pid;
    const keys = ["net.ipv4.conf.all.route_localnet", "net.ipv4.ip_forward", "net.ipv4.tcp_sack"];
    const settings = () =>
      execFileSync("nsenter", ["-t", String(sidecarPid), "-n", "sysctl", "-n", ...keys]).toString();
    const before = settings();
    const results = await run(attacker, {
      "route-localnet": "echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet",
      "ip-forward": "echo 0 > /proc/sys/net/ipv4/ip_forward",
      "tcp-sack": "echo 0 > /proc/sys/net/ipv4/tcp_sack",
      "userns-route-localnet":
        "unshare -Urm sh -c 'mount -o remount,rw /proc/sys; echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet'",
    });
    for (const probe of results.keys()) refused(results, probe);
    expect(settings()).toBe(before);
  });

  test("raw sockets, network configuration and the Docker socket: refused", async () => {
    const results = await run(attacker, {
      "raw-inet": raw("AF_INET", 1),
      "raw-packet": raw("AF_PACKET", 0),
      "userns-raw-inet": `unshare -Ur ${raw("AF_INET", 1)}`,
      "userns-raw-packet": `unshare -Ur ${raw("AF_PACKET", 0)}`,
      "ip-link": "ip link set eth0 mtu 1400",
      "ip-route": `ip route replace default via ${gateway} dev eth0 metric 1`,
      "docker-socket":
        "ls -la /var/run/docker.sock /run/docker.sock /run/containerd/containerd.sock 2>&1 | grep -v 'No such file'",
    });
    for (const probe of results.keys()) refused(results, probe);
  });

  test("cgroup files: the host's limits for the sandbox stay as they were", async () => {
    const hostLimit = join("/sys/fs/cgroup/memory/docker", attackerId, "memory.limit_in_bytes");
    const before = readFileSync(hostLimit, "utf8");
    const results = await run(attacker, {
      "memory-limit":
        "echo 9223372036854771712 > /sys/fs/cgroup/memory/memory.limit_in_bytes && echo changed",
      "cgroup-procs": "echo $$ > /sys/fs/cgroup/memory/cgroup.procs",
      "cgroup-mkdir": "mkdir /sys/fs/cgroup/memory/pwned",
      "release-agent": "echo /tmp/x > /sys/fs/cgroup/memory/release_agent",
      "userns-remount-limit":
        "unshare -Urm sh -c 'mount -o remount,rw /sys/fs/cgroup/memory; echo 9223372036854771712 > /sys/fs/cgroup/memory/memory.limit_in_bytes'",
    });
    refused(results, "release-agent");
    // runc: the sandbox's cgroups are the host kernel's, mounted read-only. gVisor: its cgroupfs is
    // the Sentry's bookkeeping, which the sandbox may write; the host's cgroup is out of its reach.
    if (!gvisor) for (const probe of results.keys()) refused(results, probe);
    expect(readFileSync(hostLimit, "utf8")).toBe(before);
    expect(Number(before)).toBeLessThanOrEqual(2 ** 32);
  });

  test("device nodes: none made, none opened", async () => {
    const disks = readdirSync("/sys/block").filter((disk) => !disk.startsWith("loop"));
    const [major, minor] = readFileSync(`/sys/block/${disks[0]}/dev`, "utf8").trim().split(":");
    const probes: Probes = {
      "mknod-char-tmp": "mknod /tmp/pdk-mem c 1 1 && head -c1 /tmp/pdk-mem > /dev/null",
      "mknod-char-root": "mknod /root/pdk-mem c 1 1 && head -c1 /root/pdk-mem > /dev/null",
      "mknod-block": `mknod /root/pdk-disk b ${major} ${minor} && head -c1 /root/pdk-disk > /dev/null`,
      "userns-mknod": `unshare -Ur sh -c 'mknod /tmp/pdk-disk2 b ${major} ${minor} && head -c1 /tmp/pdk-disk2 > /dev/null'`,
      "dev-mem": "head -c1 /dev/mem",
      "dev-kmem": "head -c1 /dev/kmem",
      "dev-port": "head -c1 /dev/port",
      "dev-kmsg": "head -c1 /dev/kmsg",
    };
    for (const disk of disks) probes[`dev-${disk}`] = `head -c1 /dev/${disk}`;
    const results = await run(attacker, probes);
    for (const probe of results.keys()) refused(results, probe);
    // Nothing the sandbox made is a device node in its layer on the host either (overlayfs's own
    // whiteouts are character devices 0:0).
    const inspected = await testDocker.getContainer(attacker.id).inspect();
    const upper = String((inspected.GraphDriver.Data as Record<string, string>).UpperDir ?? "");
    const devices = execFileSync("find", [
      upper,
      "(",
      "-type",
      "b",
      "-o",
      "-type",
      "c",
      ")",
      "-printf",
      "%p %D\\n",
    ])
      .toString()
      .split("\n")
      .filter((line) => line.includes("pdk-"));
    expect(devices).toEqual([]);
  });

  test("tini and execd are the sandbox's own: what they hold opens nothing beyond it", async () => {
    const tokens = t.server.stack.sandboxes.tokens(attacker.id);
    const neighbourTokens = t.server.stack.sandboxes.tokens(neighbour.id);
    const results = await run(attacker, {
      processes: "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done",
      environments:
        "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -i token",
      "ptrace-tini": ptraceProbe("1"),
      "ptrace-execd": ptraceProbe(execdPid),
    });
    // Its processes are its own: no sidecar, engine or host process is visible.
    const processes = results.get("processes")?.output ?? "";
    expect(processes).toContain("execd.js");
    expect(processes).not.toMatch(/dockerd|containerd|egress|vitest|runsc/);
    // execd and the sandbox's commands are the same root (decision 0004): the execd token it may
    // read is its own sandbox's, which opens no other sandbox's execd, and the egress sidecar's
    // token, which would change its policy, is not in the sandbox at all.
    const environments = results.get("environments")?.output ?? "";
    expect(environments).not.toContain(tokens.egress);
    expect(environments).not.toContain(neighbourTokens.execd);
    const neighbourExecd = `http://${neighbourAddress}:${EXECD_PORT}/ping`;
    expect((await fetch(neighbourExecd, { headers: { [EXECD_TOKEN_HEADER]: tokens.execd } })).status).toBe(
      401,
    );
    expect(
      (await fetch(neighbourExecd, { headers: { [EXECD_TOKEN_HEADER]: neighbourTokens.execd } })).status,
    ).toBe(200);
    // gVisor refuses attaching to a process that is not one's descendant; the host kernel (no
    // Yama here) lets the same root attach to its own tini and execd, which hold nothing more.
    if (gvisor) {
      refused(results, "ptrace-tini");
      refused(results, "ptrace-execd");
    }
    expect((await attacker.commands.run("echo alive")).stdout).toBe("alive\n");
  });

  test("the egress sidecar's API refuses the sandbox, and the policy stays as given", async () => {
    const api = `http://127.0.0.1:${EGRESS_PORT}`;
    const openAll = JSON.stringify({ defaultAction: "allow", egress: [] });
    const curl = (method: string, path: string, token?: string) =>
      `curl -sf -m 5 -X ${method} ${token ? `-H "${EGRESS_TOKEN_HEADER}: ${token}"` : ""} -H 'content-type: application/json' ${method === "GET" || method === "DELETE" ? "" : `-d '${openAll}'`} ${api}${path}`;
    const execdToken = t.server.stack.sandboxes.tokens(attacker.id).execd; // its own, readable in execd's environment
    const results = await run(attacker, {
      healthz: curl("GET", "/healthz"),
      "get-policy": curl("GET", "/policy"),
      "put-policy": curl("PUT", "/policy"),
      "patch-policy": curl("PATCH", "/policy", "0".repeat(43)),
      "delete-policy": curl("DELETE", "/policy?target=203.0.113.0/24", "guess"),
      "put-policy-with-execd-token": curl("PUT", "/policy", execdToken),
    });
    // Reachable (same network namespace) but closed to anyone without the sidecar's own token.
    expect(results.get("healthz")?.exitCode).toBe(0);
    for (const probe of [
      "get-policy",
      "put-policy",
      "patch-policy",
      "delete-policy",
      "put-policy-with-execd-token",
    ])
      refused(results, probe);
    expect(await attacker.networkPolicy.get()).toEqual({ mode: "enforcing", policy });
  });

  test("the host's addresses, the server's port, link-local addresses and other sandboxes: unreachable", async () => {
    const serverPort = Number(new URL(t.url).port);
    const ports = [serverPort, listener.port, 2375, 2376];
    const targets: Array<[string, number]> = [];
    for (const address of new Set([...hostAddresses(), gateway]))
      for (const port of ports) targets.push([address, port]);
    targets.push(
      ["169.254.169.254", 80],
      ["169.254.169.254", listener.port],
      [linkLocalAddress, listener.port],
    );
    // A plain container on the engine's default bridge reaches the host's listeners and the server:
    // they are reachable at all, so "closed" from a sandbox is the firewall's doing.
    const controlTargets = targets.filter(
      // The engine's default bridge has no IPv6: the host's IPv6 addresses are probed without a control.
      ([host, port]) => port !== 2375 && port !== 2376 && host !== "169.254.169.254" && !host.includes(":"),
    );
    // A cloud host's metadata service, where this host has one (this test's own VM does).
    if (await hostReaches("169.254.169.254", 80)) controlTargets.push(["169.254.169.254", 80]);
    const control = await reachFromPlainContainer(controlTargets);
    for (const [host, port] of controlTargets)
      expect(control.get(`${host}:${port}`)?.exitCode, `${host}:${port}`).toBe(0);

    const fromAttacker: Probes = { "control-own-sidecar": connectProbe("127.0.0.1", EGRESS_PORT) };
    const fromNeighbour: Probes = { "control-own-execd": connectProbe("127.0.0.1", EXECD_PORT) };
    for (const [host, port] of targets) {
      fromAttacker[`${host}:${port}`] = connectProbe(host, port);
      fromNeighbour[`${host}:${port}`] = connectProbe(host, port);
    }
    fromAttacker["neighbour-execd"] = connectProbe(neighbourAddress, EXECD_PORT);
    fromNeighbour["attacker-execd"] = connectProbe(attackerAddress, EXECD_PORT);
    fromNeighbour["attacker-sidecar"] = connectProbe(attackerAddress, EGRESS_PORT);
    const options = { parallel: true, timeoutSeconds: 4 };
    const [attackerResults, neighbourResults] = await Promise.all([
      run(attacker, fromAttacker, options),
      run(neighbour, fromNeighbour, options),
    ]);
    expect(attackerResults.get("control-own-sidecar")?.exitCode).toBe(0);
    expect(neighbourResults.get("control-own-execd")?.exitCode).toBe(0);
    for (const results of [attackerResults, neighbourResults])
      for (const probe of results.keys()) if (!probe.startsWith("control-")) refused(results, probe);
  });
});
