// Adds the gVisor runtime to Docker's daemon.json (keeping whatever else it holds): the runsc that
// setup builds from Debian's source with Paddock's fixes (scripts/build-runsc.sh, decision 0177).
// --network=host: sandbox sockets are host-kernel sockets in the container's own network
// namespace (Docker's), where the bridge's and the egress sidecar's rules apply.
// The platform is pinned to ptrace: on these virtual machines its syscalls cost a third of
// systrap's, the default since 2023 (measurements in decision 0002); KVM hangs at create.
// --overlay2=none: since 2023 runsc keeps a container's file changes in its own overlay (a
// filestore file), where `docker commit` cannot see them; snapshots need them on the host layer.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const file = process.argv[2] ?? "/etc/docker/daemon.json";
const config = existsSync(file) ? JSON.parse(readFileSync(file, "utf8") || "{}") : {};
const wanted = {
  path: "/usr/local/lib/paddock/runsc",
  runtimeArgs: ["--network=host", "--platform=ptrace", "--overlay2=none"],
};
if (JSON.stringify(config.runtimes?.runsc) !== JSON.stringify(wanted)) {
  config.runtimes = { ...config.runtimes, runsc: wanted };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  console.log(`registered runsc in ${file}`);
}
