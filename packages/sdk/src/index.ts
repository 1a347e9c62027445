export { Paddock } from "./account.js";
export { Audit } from "./audit.js";
export { Billing } from "./billing.js";
export { type CommandEvent, Commands, type RunOptions, type StreamOptions } from "./commands.js";
export { Diagnostics, type DiagnosticsOptions } from "./diagnostics.js";
export * from "./errors.js";
export { Files, type WriteData } from "./files.js";
export { type AddMemoryOptions, Memory } from "./memory.js";
export { NetworkPolicy } from "./network-policy.js";
export { agentKeyVariable, PaymentOperations, Payments } from "./payments.js";
export { type CreateOptions, Sandbox } from "./sandbox.js";
export { Secrets } from "./secrets.js";
export {
  type BuildOptions,
  type ContextBuildOptions,
  type FollowOptions,
  type StepsBuildOptions,
  Templates,
} from "./templates.js";
export {
  type ConnectionOptions,
  defaultBaseUrl,
  defaultRequestTimeoutMs,
  type RequestOptions,
} from "./transport.js";
export type * from "./types.js";
export { Usage } from "./usage.js";
export { Volumes } from "./volumes.js";
