import type { paths } from "./schema.gen.js";

/** The JSON body an operation answers with, for a status code. */
export type ResponseOf<
  Path extends keyof paths,
  Method extends keyof paths[Path],
  Status extends number,
> = paths[Path][Method] extends { responses: infer Responses }
  ? Status extends keyof Responses
    ? Responses[Status] extends { content: { "application/json": infer Body } }
      ? Body
      : never
    : never
  : never;

/** The JSON body an operation accepts. */
export type RequestOf<
  Path extends keyof paths,
  Method extends keyof paths[Path],
> = paths[Path][Method] extends {
  requestBody?: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

export type SandboxInfo = ResponseOf<"/sandboxes/{id}", "get", 200>;
export type SandboxList = ResponseOf<"/sandboxes", "get", 200>;
export type CreateSandboxOptions = RequestOf<"/sandboxes", "post">;
/** What happens at the timeout, when idle, and on use while paused, as it applies to a sandbox. */
export type SandboxLifecycle = SandboxInfo["lifecycle"];
/** The lifecycle a create asks for; what it leaves out of `idleTimeout`/`maxPaused` is the plan's. */
export type LifecycleOptions = NonNullable<CreateSandboxOptions["lifecycle"]>;
export type PauseOptions = RequestOf<"/sandboxes/{id}/pause", "post">;
export type CommandResult = ResponseOf<"/sandboxes/{id}/run", "post", 200>;
export type FileInfo = ResponseOf<"/sandboxes/{id}/files/list", "get", 200>["items"][number];
export type CodeResult = ResponseOf<"/sandboxes/{id}/code", "post", 200>;
export type SandboxMetrics = ResponseOf<"/sandboxes/{id}/metrics", "get", 200>;
export type DiagnosticText = ResponseOf<"/sandboxes/{id}/diagnostics/logs", "get", 200>;
export type ApiKey = ResponseOf<"/keys", "get", 200>["items"][number];
export type ApiKeyWithSecret = ResponseOf<"/keys", "post", 201>;
export type Account = ResponseOf<"/auth/me", "get", 200>;
export type Session = ResponseOf<"/auth/login", "post", 200>;
export type Template = ResponseOf<"/sandboxes/templates", "get", 200>["items"][number];
export type EnforcedNetworkPolicy = ResponseOf<"/sandboxes/{id}/network-policy", "get", 200>;
export type NetworkRule = EnforcedNetworkPolicy["policy"]["egress"][number];
export type NetworkPolicyOptions = NonNullable<CreateSandboxOptions["networkPolicy"]>;
export type SecretInfo = ResponseOf<"/secrets", "get", 200>["items"][number];
export type VolumeInfo = ResponseOf<"/volumes/{id}", "get", 200>;
export type VolumeMountOptions = NonNullable<CreateSandboxOptions["volumes"]>[number];
export type MemoryEntry = ResponseOf<"/memory", "post", 201>;
export type MemoryList = ResponseOf<"/memory", "get", 200>;
export type MemorySearchHit = ResponseOf<"/memory/search", "get", 200>["items"][number];
export type UsageSummary = ResponseOf<"/usage", "get", 200>;
export type UsageDay = UsageSummary["days"][number];
/** The plan's default idle policy: what a create leaving out `idleTimeout`/`maxPaused` gets. */
export type PlanLifecycle = UsageSummary["plan"]["lifecycle"];
export type SandboxUsageList = ResponseOf<"/usage/sandboxes", "get", 200>;
export type SandboxUsage = SandboxUsageList["items"][number];
export type AuditPage = ResponseOf<"/audit", "get", 200>;
export type AuditEvent = AuditPage["items"][number];
/** Filters and page of `client.audit.list`. */
export type AuditQuery = NonNullable<paths["/audit"]["get"]["parameters"]["query"]>;
export type PlanList = ResponseOf<"/billing/plans", "get", 200>;
export type Plan = PlanList["items"][number];
export type CheckoutSession = ResponseOf<"/billing/checkout", "post", 201>;
export type PlanId = RequestOf<"/billing/checkout", "post">["plan"];
export type PaymentCredentials = ResponseOf<"/payments/credentials", "get", 200>;
export type AgentKey = ResponseOf<"/payments/agent-key", "get", 200>;
export type AgentKeyWithSecret = ResponseOf<"/payments/agent-key", "post", 201>;
export type AgentKeyLimits = RequestOf<"/payments/agent-key", "post">;
export type PaymentOperation = AgentKeyLimits["allowedOperations"][number];
export type Customer = ResponseOf<"/payments/customers", "post", 201>;
export type CustomerList = ResponseOf<"/payments/customers", "get", 200>;
export type CreateCustomerOptions = RequestOf<"/payments/customers", "post">;
export type Invoice = ResponseOf<"/payments/invoices", "post", 201>;
export type InvoiceList = ResponseOf<"/payments/invoices", "get", 200>;
export type CreateInvoiceOptions = RequestOf<"/payments/invoices", "post">;
export type PaymentLink = ResponseOf<"/payments/payment-links", "post", 201>;
export type PaymentLinkList = ResponseOf<"/payments/payment-links", "get", 200>;
export type CreatePaymentLinkOptions = RequestOf<"/payments/payment-links", "post">;
/** One of the account's own templates (`client.templates`). */
export type AccountTemplate = ResponseOf<"/templates", "get", 200>["items"][number];
/** A template of the account with its builds, newest first. */
export type AccountTemplateDetail = ResponseOf<"/templates/{name}", "get", 200>;
export type TemplateBuild = ResponseOf<"/templates/{name}/builds/{buildId}", "get", 200>;
export type TemplateBuildStatus = TemplateBuild["status"];
export type BuildStarted = ResponseOf<"/templates/{name}/builds", "post", 202>;
export type BuildLogPage = ResponseOf<"/templates/{name}/builds/{buildId}/logs", "get", 200>;
export type BuildLogEntry = BuildLogPage["entries"][number];
/** A build from a template and steps: `from`, `steps`, `startCommand`, `readyCommand`, … */
export type StepsBuildRequest = RequestOf<"/templates/{name}/builds", "post">;
export type BuildStep = StepsBuildRequest["steps"][number];
