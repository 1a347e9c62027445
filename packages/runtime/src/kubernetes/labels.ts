/** Labels every object of this runtime carries; the same names the Docker runtime uses. */
export const managedLabel = "paddock.managed";
export const roleLabel = "paddock.role";
export const sandboxLabel = "paddock.sandbox";
export const instanceLabel = "paddock.instance";

export type Role = "sandbox" | "paused" | "snapshot";

const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A label or annotation key: `[prefix/]name`, the prefix a DNS subdomain. */
export function isQualifiedName(key: string): boolean {
  const slash = key.indexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !dnsSubdomain.test(prefix))) return false;
  return name.length <= 63 && labelName.test(name);
}

export function isLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && labelName.test(value));
}

/** The labels that mark an object as this server's (and, given a sandbox id, that sandbox's). */
export function ownLabels(instance: string, role: Role, sandboxId?: string): Record<string, string> {
  return {
    [managedLabel]: "true",
    [instanceLabel]: instance,
    [roleLabel]: role,
    ...(sandboxId ? { [sandboxLabel]: sandboxId } : {}),
  };
}

/** Label selector (`k=v,k=v`) matching this server's objects of one role. */
export function ownSelector(instance: string, role: Role): string {
  return Object.entries(ownLabels(instance, role))
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}

/**
 * Splits the workload's labels into those Kubernetes accepts as labels and those it does not
 * (a JSON record, say), which go into annotations under the same key; listWorkloads merges them back.
 */
export function splitLabels(labels: Record<string, string>): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  const split = { labels: {} as Record<string, string>, annotations: {} as Record<string, string> };
  for (const [key, value] of Object.entries(labels)) {
    if (!isQualifiedName(key)) throw new Error(`workload label key ${key} is not a Kubernetes key`);
    if (isLabelValue(value)) split.labels[key] = value;
    else split.annotations[key] = value;
  }
  return split;
}

/** `a=b,c=d` as matchLabels. */
export function parseSelector(selector: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of selector.split(",")) {
    const [key, value] = pair.split("=").map((part) => part.trim());
    if (key) labels[key] = value ?? "";
  }
  return labels;
}
