import type { PaddockConfig } from "@paddock/common";
import { RuntimeStartError, type SecureRuntime } from "../runtime.js";

/** The RuntimeClass name and node handler usually installed for each secure runtime. */
export const usualRuntimeClasses = {
  gvisor: { name: "gvisor", handler: "runsc" },
  kata: { name: "kata", handler: "kata" },
  firecracker: { name: "kata-fc", handler: "kata-fc" },
} as const;

/**
 * Resolves `[secure_runtime]` against the cluster's RuntimeClasses (`exists` asks the API),
 * refusing a missing class with the manifest that would create it.
 */
export async function resolveKubernetesSecureRuntime(
  config: PaddockConfig["secure_runtime"],
  exists: (runtimeClass: string) => Promise<boolean>,
): Promise<SecureRuntime> {
  const none: SecureRuntime = { type: "", engineName: "", supportsNetworkPolicy: true };
  if (config.type === "") return none;
  if (config.type === "auto") {
    const name = config.k8s_runtime_class || usualRuntimeClasses.gvisor.name;
    return (await exists(name)) ? { type: "gvisor", engineName: name, supportsNetworkPolicy: false } : none;
  }
  const usual = usualRuntimeClasses[config.type];
  const name = config.k8s_runtime_class || usual.name;
  if (!(await exists(name))) {
    throw new RuntimeStartError(
      `secure_runtime.type = "${config.type}" needs the RuntimeClass "${name}", which the cluster does not have. Create it (apiVersion: node.k8s.io/v1, kind: RuntimeClass, metadata.name: ${name}, handler: ${usual.handler}) on nodes whose container runtime has that handler; or set secure_runtime.k8s_runtime_class to an existing RuntimeClass, or secure_runtime.type = "" to run without a secure runtime.`,
    );
  }
  // Under gVisor the egress sidecar would run inside the pod's gVisor sandbox, whose kernel has no
  // nftables (decision 0006); Kata guests run a real kernel.
  return { type: config.type, engineName: name, supportsNetworkPolicy: config.type !== "gvisor" };
}
