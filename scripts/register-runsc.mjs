// Adds the gVisor runtimes to Docker's daemon.json (keeping whatever else it holds): the runsc that
// setup builds from Debian's source with Paddock's fixes (scripts/build-runsc.sh, decision 0177).
// runsc, --network=host: sandbox sockets are host-kernel sockets in the container's own network
// namespace (Docker's), where the bridge's and the egress sidecar's rules apply.
// runsc-netstack, --network=sandbox: gVisor's own network stack (no host network syscalls), the
// only mode in which runsc can checkpoint a sandbox with its memory (decision 0194);
// --net-disconnect-ok lets a checkpoint drop open connections (a server's keep-alive to execd)
// instead of refusing.
// The platform is pinned to ptrace: on these virtual machines its syscalls cost a third of
// systrap's, the default since 2023 (measurements in decision 0002); KVM hangs at create.
// --overlay2=none: since 2023 runsc keeps a container's file changes in its own overlay (a
// filestore file), where `docker commit` cannot see them; snapshots need them on the host layer.
// "experimental": Docker's checkpoint API (`docker checkpoint create`, start from a checkpoint)
// is offered only then.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const file = process.argv[2] ?? "/etc/docker/daemon.json";
const config = existsSync(file) ? JSON.parse(readFileSync(file, "utf8") || "{}") : {};
const runsc = (...network) => ({
  path: "/usr/local/lib/paddock/runsc",
  runtimeArgs: [...network, "--platform=ptrace", "--overlay2=none"],
});
const wanted = {
  runsc: runsc("--network=host"),
  "runsc-netstack": runsc("--network=sandbox", "--net-disconnect-ok"),
};
const changed = [];
for (const [name, runtime] of Object.entries(wanted)) {
  if (JSON.stringify(config.runtimes?.[name]) !== JSON.stringify(runtime)) {
    config.runtimes = { ...config.runtimes, [name]: runtime };
    changed.push(`registered ${name}`);
  }
}
if (config.experimental !== true) {
  config.experimental = true;
  changed.push("enabled experimental features (checkpoints)");
}
if (changed.length > 0) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  console.log(`${changed.join(", ")} in ${file}`);
}
