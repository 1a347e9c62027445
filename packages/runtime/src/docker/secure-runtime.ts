import type { PaddockConfig } from "@paddock/common";
import { RuntimeStartError, type SecureRuntime } from "../runtime.js";

const defaultEngineNames = { gvisor: "runsc", kata: "kata-runtime" } as const;

/**
 * Resolves `[secure_runtime]` against the runtimes the Docker engine really has, refusing
 * combinations that cannot work with a message that says what to change.
 */
export function resolveDockerSecureRuntime(
  config: PaddockConfig["secure_runtime"],
  engineRuntimes: string[],
): SecureRuntime {
  const available = engineRuntimes.join(", ") || "none";
  if (config.type === "auto") {
    const name = config.docker_runtime || defaultEngineNames.gvisor;
    return engineRuntimes.includes(name)
      ? { type: "gvisor", engineName: name, supportsNetworkPolicy: false }
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
  // gVisor has no NAT table, which the egress sidecar needs; Kata runs a real guest kernel.
  return { type: config.type, engineName: name, supportsNetworkPolicy: config.type !== "gvisor" };
}
