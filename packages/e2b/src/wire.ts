import { deriveSecret, E2B_ENVD_VERSION, parseCpuMillis, parseMemoryBytes } from "@paddock/common";
import type { Sandbox, SandboxState, VolumeMount } from "@paddock/runtime";

/**
 * E2B's names for Paddock's templates. E2B's SDKs default to `base` (and the code interpreter to
 * `code-interpreter-v1`), shaped as E2B's: calls act as `user` in /home/user, who has sudo
 * (templates e2b-base and e2b-code-interpreter). Every Paddock template id works as itself too.
 * No prototype: a name such as "valueOf" or "constructor" is no alias, not Object's method.
 */
export const templateAliases: Record<string, string> = Object.assign(Object.create(null), {
  base: "e2b-base",
  "code-interpreter-v1": "e2b-code-interpreter",
  "code-interpreter": "code-interpreter",
});

/** E2B knows two states: a sandbox is running or paused; the rest are not listed. */
export type E2bState = "running" | "paused";

/** Paddock's states behind each E2B state: the one table both directions are read from. */
export const paddockStates: Record<E2bState, SandboxState[]> = {
  running: ["Pending", "Running", "Resuming"],
  paused: ["Pausing", "Paused"],
};

export function e2bState(sandbox: Sandbox): E2bState | undefined {
  if (paddockStates.running.includes(sandbox.status.state)) return "running";
  if (paddockStates.paused.includes(sandbox.status.state)) return "paused";
  return undefined;
}

/**
 * The sandbox's envd token (E2B's `envdAccessToken`, sent as `X-Access-Token`): opens its
 * in-sandbox protocol through the gateway. Derived, so nothing is stored and every replica agrees.
 */
export function envdAccessToken(secretKey: string, sandboxId: string): string {
  return deriveSecret(secretKey, "e2b-envd", sandboxId);
}

/** The sandbox's traffic token (`e2b-traffic-access-token`): opens its other ports by host name. */
export function trafficAccessToken(secretKey: string, sandboxId: string): string {
  return deriveSecret(secretKey, "e2b-traffic", sandboxId);
}

/**
 * The domain E2B's `getHost(port)` appends to `<port>-<sandbox id>.`: the server's own host and
 * port, or `localhost:<port>` for a loopback or IP address, since `*.localhost` names the local
 * machine in browsers and curl while an IP address takes no subdomain.
 */
export function sandboxDomain(publicUrl: string): string {
  const url = new URL(publicUrl);
  const port = url.port ? `:${url.port}` : "";
  const isAddress = /^[\d.]+$/.test(url.hostname) || url.hostname.startsWith("[");
  return isAddress || url.hostname === "localhost" ? `localhost${port}` : `${url.hostname}${port}`;
}

/** A far expiry for sandboxes without one: E2B's clients expect a date. */
const never = "9999-12-31T23:59:59.000Z";

export interface WireContext {
  secretKey: string;
  domain: string;
  /** The template's CPU and memory, for E2B's sandbox details. */
  resources(templateId: string | undefined): { cpuCount: number; memoryMB: number; diskSizeMB: number };
}

/** The `Sandbox` E2B answers a create or a connect with. */
export function createdSandbox(sandbox: Sandbox, context: WireContext, alias?: string) {
  return {
    templateID: sandbox.template ?? "",
    sandboxID: sandbox.id,
    ...(alias ? { alias } : {}),
    clientID: "paddock",
    envdVersion: E2B_ENVD_VERSION,
    envdAccessToken: envdAccessToken(context.secretKey, sandbox.id),
    trafficAccessToken: trafficAccessToken(context.secretKey, sandbox.id),
    domain: context.domain,
  };
}

/** E2B's `ListedSandbox`, with the volumes the sandbox mounts. */
export function listedSandbox(sandbox: Sandbox, context: WireContext, mounts: VolumeMount[] = []) {
  return {
    templateID: sandbox.template ?? "",
    sandboxID: sandbox.id,
    clientID: "paddock",
    startedAt: sandbox.createdAt,
    endAt: sandbox.expiresAt ?? never,
    ...context.resources(sandbox.template),
    metadata: sandbox.metadata,
    state: e2bState(sandbox) ?? "running",
    envdVersion: E2B_ENVD_VERSION,
    volumeMounts: mounts.map((mount) => ({ name: mount.name, path: mount.mountPath })),
  };
}

/** E2B's `SandboxDetail`. */
export function detailedSandbox(sandbox: Sandbox, context: WireContext, mounts: VolumeMount[] = []) {
  const policy = sandbox.networkPolicy;
  return {
    ...listedSandbox(sandbox, context, mounts),
    envdAccessToken: envdAccessToken(context.secretKey, sandbox.id),
    domain: context.domain,
    ...(policy ? { allowInternetAccess: policy.defaultAction !== "deny" } : {}),
    lifecycle: { autoResume: sandbox.lifecycle.autoResume, onTimeout: sandbox.lifecycle.onTimeout },
  };
}

/** CPU count and memory from a template's resource limits (what its sandboxes get). */
export function templateResources(limits: Record<string, string> | undefined) {
  const millis = limits?.cpu ? parseCpuMillis(limits.cpu) : undefined;
  const bytes = limits?.memory ? parseMemoryBytes(limits.memory) : undefined;
  return {
    cpuCount: millis ? Math.max(1, Math.round(millis / 1000)) : 1,
    memoryMB: bytes ? Math.round(bytes / 2 ** 20) : 512,
    diskSizeMB: 0,
  };
}
