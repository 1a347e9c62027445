export { DockerRuntime } from "./docker/docker-runtime.js";
export { bridgeName } from "./docker/network.js";
export { callEgressPolicy, type EnforcedPolicy } from "./egress-policy.js";
export { KubernetesRuntime, type KubernetesRuntimeOptions } from "./kubernetes/kubernetes-runtime.js";
export * from "./model.js";
export { WarmPools } from "./pool.js";
export * from "./runtime.js";
export type { ChangeListener, SandboxChange } from "./sandbox-changes.js";
export * from "./sandbox-operations.js";
export type { SandboxQuota } from "./sandbox-quota.js";
export { SandboxService } from "./sandbox-service.js";
export { SnapshotService } from "./snapshot-service.js";
export {
  databaseUrl,
  openRuntimeStack,
  type RuntimeStack,
  type RuntimeStackOptions,
  resolveSecretKey,
} from "./stack.js";
export * from "./state-machine.js";
export { buildTemplates, TemplateBuildError, type TemplateBuildEvent } from "./template-builds.js";
export { loadTemplates, type Template, unknownTemplate } from "./templates.js";
export { type Period, periodOf, type SandboxUsage, UsageLedger } from "./usage-ledger.js";
export * from "./validation.js";
