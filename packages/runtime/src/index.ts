export { DockerRuntime } from "./docker/docker-runtime.js";
export { bridgeName } from "./docker/network.js";
export { callEgressPolicy, type EnforcedPolicy } from "./egress-policy.js";
export {
  type CodeContext,
  ExecdClient,
  type ExecdForwarding,
  type ExecdMetrics,
  type FileInfo,
  type RunCommandRequest,
  type StreamEvent,
} from "./execd/client.js";
export { execdErrorByCode } from "./execd/errors.js";
export type {
  CommandEvent,
  E2bProtocol,
  EnvdMetrics,
  RunCodeRequest,
  TerminalEvent,
  TerminalStart,
} from "./execd/extensions.js";
export { maxExecdJson, readJsonLimited, readLimited } from "./execd/limited-read.js";
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
export { BuildSpec, describeStep } from "./templates/build-spec.js";
export { TemplateCatalog } from "./templates/catalog.js";
export { parseDockerfile } from "./templates/dockerfile.js";
export {
  type BuiltInTemplate,
  loadTemplates,
  type Template,
  unknownTemplate,
} from "./templates/manifests.js";
export { buildTemplates, TemplateBuildError, type TemplateBuildEvent } from "./templates/operator-builds.js";
export { publishAccountTemplate } from "./templates/publishing.js";
export { type NewTemplateBuild, TemplateBuilds, type TemplateQuota } from "./templates/template-builds.js";
export {
  type AccountTemplate,
  type BuildLogEntry,
  type BuildStatus,
  type TemplateBuild,
  TemplateRepository,
  type TemplateSettings,
} from "./templates/template-repository.js";
export { type Period, periodOf, type SandboxUsage, UsageLedger } from "./usage-ledger.js";
export * from "./validation.js";
export {
  type CreateVolumeInput,
  type VolumeOperations,
  VolumeService,
} from "./volume-service.js";
