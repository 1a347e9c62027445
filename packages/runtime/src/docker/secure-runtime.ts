import type { PaddockConfig } from "@paddock/common";
import { RuntimeStartError, type SecureRuntime } from "../runtime.js";

const defaultEngineNames = { gvisor: "runsc", kata: "kata-runtime" } as const;

/**
 * Whether runsc registered with these arguments gives its sandboxes host-kernel sockets
 * (`--network=host`) in the container's own network namespace: the egress sidecar's nftables
 * rules, made there by a process on the host kernel, then apply to them (decision 0006). Its own
 * netstack (the default) has no NAT table for them to apply to.
 */
export function runscUsesHostNetwork(runtimeArgs: string[]): boolean {
  return runtimeArgs.some(
    (arg, index) =>
      /^--?network=host$/.test(arg) || (/^--?network$/.test(arg) && runtimeArgs[index + 1] === "host"),
  );
}

/**
 * Resolves `[secure_runtime]` against the runtimes the Docker engine really has (and the
 * arguments each is registered with), refusing combinations that cannot work with a message that
 * says what to change.
 */
export function resolveDockerSecureRuntime(
  config: PaddockConfig["secure_runtime"],
  engineRuntimes: string[],
  runtimeArgs: Record<string, string[]> = {},
): SecureRuntime {
  const available = engineRuntimes.join(", ") || "none";
  const gvisor = (name: string): SecureRuntime => ({
    type: "gvisor",
    engineName: name,
    supportsNetworkPolicy: runscUsesHostNetwork(runtimeArgs[name] ?? []),
  });
  if (config.type === "auto") {
    const name = config.docker_runtime || defaultEngineNames.gvisor;
    return engineRuntimes.includes(name)
      ? gvisor(name)
      : { type: "", engineName: "", supportsNetworkPolicy: true };
  }
  if (config.type === "") return { type: "", engineName: "", supportsNetworkPolicy: true };
  if (config.type === "firecracker") {
    throw new RuntimeStartError(
      'secure_runtime.type = "firecracker" is available only with runtime.type = "kubernetes" (a RuntimeClass backed by a microVM runtime); in Docker mode use "gvisor" or "kata".',
    );
  }
  const name = config.docker_runtime || defaultEngineNames[config.type];
  if (!engineRuntimes.includes(name)) {
    const hint =
      config.type === "gvisor"
        ? 'Install gVisor (`make setup` installs runsc 0.0~20240729, built from the Debian trixie source package with the fixes of decision 0177) and register it in /etc/docker/daemon.json as "runtimes": {"runsc": {"path": "/usr/local/lib/paddock/runsc", "runtimeArgs": ["--network=host", "--platform=ptrace", "--overlay2=none"]}}, then restart dockerd'
        : "Install Kata Containers and register its runtime in /etc/docker/daemon.json, then restart dockerd";
    throw new RuntimeStartError(
      `secure_runtime.type = "${config.type}" needs the Docker runtime "${name}", but the engine offers: ${available}. ${hint}; or set secure_runtime.docker_runtime to the registered name, or secure_runtime.type = "" to run without a secure runtime.`,
    );
  }
  // A Kata guest's packets reach the namespace through a tap device that traffic control
  // redirects to the veth: they never pass the output hook where the sidecar's rules sit, so a
  // policy there would be accepted and not enforced (decision 0006).
  return config.type === "gvisor"
    ? gvisor(name)
    : { type: config.type, engineName: name, supportsNetworkPolicy: false };
}

/**
 * `secure_runtime.netstack_runtime` against the engine: the runtime gVisor sandboxes without a
 * network policy run on, on gVisor's own network stack, where runsc can checkpoint them with
 * their memory (decision 0194). Undefined when not configured; a runtime that cannot serve is
 * refused with what to change.
 */
export function resolveNetstackRuntime(
  name: string,
  secure: SecureRuntime,
  runtimeArgs: Record<string, string[]>,
  host: { nameserver: string | undefined; networkFiles: boolean },
): { engineName: string; nameserver: string } | undefined {
  if (!name) return undefined;
  const refuse = (why: string) =>
    new RuntimeStartError(
      `secure_runtime.netstack_runtime = "${name}" cannot be used: ${why}; or set secure_runtime.netstack_runtime = "" (gVisor sandboxes then pause to disk with their filesystem only).`,
    );
  if (secure.type !== "gvisor") throw refuse(`it is for gVisor, and the secure runtime is "${secure.type}"`);
  const args = runtimeArgs[name];
  if (!args) {
    throw refuse(
      `the Docker engine has no runtime of that name (\`make setup\` registers runsc-netstack in /etc/docker/daemon.json)`,
    );
  }
  if (runscUsesHostNetwork(args)) throw refuse("it is registered with --network=host");
  // Docker's embedded resolver is reached through rules gVisor's own stack never sees.
  if (!host.nameserver) {
    throw refuse(
      "this host's resolv.conf names no non-loopback nameserver for its sandboxes; set egress.upstream_dns",
    );
  }
  if (!host.networkFiles)
    throw refuse("this server cannot write its sandboxes' resolv.conf (it must run as root)");
  return { engineName: name, nameserver: host.nameserver };
}
