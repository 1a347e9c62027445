import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { bashIn } from "@paddock/runtime/testing";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

/**
 * An "outside world" for egress tests in a network namespace of the test's own, routed through
 * this host: a DNS server (the sidecar's upstream) and HTTP servers on two addresses. allowed.test
 * and api.wild.test resolve to `allowed`, denied.test to `denied`; other names are NXDOMAIN.
 */
export async function openEgressWorld() {
  const ip = (...args: string[]) => run("ip", args);
  let subnet = "";
  let namespace = "";
  // Suites run side by side: a subnet another world already routes is skipped.
  for (let attempt = 0; !subnet; attempt++) {
    const candidate = `198.19.${randomInt(1, 254)}`;
    const suffix = `${process.pid % 10_000}${randomInt(100, 999)}`;
    namespace = `pdk-egw-${suffix}`;
    await ip("netns", "add", namespace);
    await ip("link", "add", `pdkw${suffix}`, "type", "veth", "peer", "name", "eth0", "netns", namespace);
    const routed = (await run("ip", ["route", "show", `${candidate}.0/24`])).stdout.trim() !== "";
    if (
      !routed &&
      (await ip("addr", "add", `${candidate}.254/24`, "dev", `pdkw${suffix}`).then(
        () => true,
        () => false,
      ))
    ) {
      await ip("link", "set", `pdkw${suffix}`, "up");
      subnet = candidate;
    } else {
      await ip("netns", "del", namespace);
      if (attempt > 5) throw new Error("no free 198.19.x.0/24 subnet for the test world");
    }
  }
  const inside = (...args: string[]) => run("ip", ["netns", "exec", namespace, "ip", ...args]);
  await inside("addr", "add", `${subnet}.1/24`, "dev", "eth0");
  await inside("addr", "add", `${subnet}.2/24`, "dev", "eth0");
  await inside("link", "set", "eth0", "up");
  await inside("link", "set", "lo", "up");
  await inside("route", "add", "default", "via", `${subnet}.254`);
  const allowed = `${subnet}.1`;
  const denied = `${subnet}.2`;
  const server: ChildProcess = spawn(
    "ip",
    [
      ...["netns", "exec", namespace, process.execPath, join(here, "egress-world-server.mjs"), allowed],
      ...[`allowed.test=${allowed}`, `denied.test=${denied}`, `api.wild.test=${allowed}`],
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    server.stdout?.once("data", () => resolve());
    server.once("exit", (code) => reject(new Error(`the test world exited (${code})`)));
  });
  return {
    dns: allowed,
    allowed,
    denied,
    async close() {
      server.kill();
      await ip("netns", "del", namespace).catch(() => undefined);
    },
  };
}

/**
 * The runtimes every egress test runs under: runc, and gVisor with host-kernel sockets, where the
 * sidecar's rules apply to the sandbox's sockets all the same (decision 0006).
 */
export const egressRuntimes = [
  { name: "runc", secureRuntime: { type: "" as const } },
  { name: "gVisor", secureRuntime: { type: "gvisor" as const } },
];

/** What a plain HTTP GET from inside the sandbox sees: the body, or why it failed. */
export async function getFrom(sandboxId: string, host: string): Promise<string> {
  const script = `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/80 && printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3 && cat <&3' 2>&1 || echo "failed: $?"`;
  return (await bashIn(sandboxId, script)).output;
}

/** What a UDP datagram sent from inside the sandbox to the world's echo (port 7) brings back. */
export async function udpEchoFrom(sandboxId: string, host: string): Promise<string> {
  const script = `exec 3<>/dev/udp/${host}/7 && echo udp-ping >&3 && timeout 3 head -n 1 <&3 2>&1 || echo "failed: $?"`;
  return (await bashIn(sandboxId, script)).output;
}
