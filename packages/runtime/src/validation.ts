import {
  Errors,
  fieldPath,
  invalidField,
  PaddockError,
  parseCpuMillis,
  parseGpuCount,
  parseMemoryBytes,
} from "@paddock/common";
import { checkedTarget } from "@paddock/common/egress-policy";

/** Domain-level checks shared by every surface that creates or changes sandboxes. */

/** An egress rule's target (a domain, `*.domain`, an IP address or a CIDR) as the caller wrote it at `where`. */
export function validateNetworkTarget(target: unknown, where: string): void {
  checkedTarget(target, where);
}

const labelName = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const reservedPrefixes = ["opensandbox.io/", "paddock.io/"];

function invalid(message: string): never {
  throw new PaddockError(Errors.invalidRequest, message);
}

/** Kubernetes label key: optional DNS-subdomain prefix (≤ 253) + "/" + name (≤ 63). */
export function labelKeyProblem(key: string): string | undefined {
  if (reservedPrefixes.some((prefix) => key.startsWith(prefix)))
    return `metadata key ${key} uses a reserved prefix`;
  const slash = key.indexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !dnsSubdomain.test(prefix))) {
    return `metadata key ${key}: prefix must be a DNS subdomain`;
  }
  if (name.length === 0 || name.length > 63 || !labelName.test(name)) {
    return `metadata key ${key} is not a valid label key (≤ 63 chars, alphanumerics, '-', '_', '.')`;
  }
  return undefined;
}

export function labelValueProblem(key: string, value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > 63 || !labelName.test(value)) {
    return `metadata value of ${key} is not a valid label value (≤ 63 chars, alphanumerics, '-', '_', '.')`;
  }
  return undefined;
}

/** `where` is the JSON path of the metadata object in the request (`body.metadata`, or `body` for a patch). */
export function validateMetadata(metadata: Record<string, string | null>, where = "body.metadata"): void {
  for (const [key, value] of Object.entries(metadata)) {
    const problem =
      labelKeyProblem(key) ?? (typeof value === "string" ? labelValueProblem(key, value) : undefined);
    if (problem) invalid(invalidField(fieldPath(where, key), problem));
  }
}

/**
 * Sizes of what a sandbox's main process is started with (UTF-8 bytes). Linux refuses one
 * argument or variable of 128 KiB or more with its NUL (MAX_ARG_STRLEN); the totals keep the
 * engine's create request and the process's start well inside what every runtime accepts.
 */
export const launchLimits = { itemBytes: 128 * 1024 - 1, entrypointBytes: 256 * 1024, envBytes: 256 * 1024 };

export function validateLaunch(entrypoint: readonly string[], env: Record<string, string>): void {
  const { itemBytes, entrypointBytes, envBytes } = launchLimits;
  const sizes = entrypoint.map((argument) => Buffer.byteLength(argument));
  const variables = Object.entries(env).map(([name, value]) => Buffer.byteLength(`${name}=${value}`));
  if (sizes.some((size) => size > itemBytes) || variables.some((size) => size > itemBytes))
    invalid(`each entrypoint argument and env variable is limited to ${itemBytes} bytes`);
  if (sizes.reduce((total, size) => total + size, 0) > entrypointBytes)
    invalid(`the entrypoint is limited to ${entrypointBytes} bytes in all; pass a script as a file instead`);
  if (variables.reduce((total, size) => total + size, 0) > envBytes)
    invalid(`env is limited to ${envBytes} bytes in all (NAME=value)`);
}

export interface ParsedResources {
  cpuMillis?: number;
  memoryBytes?: number;
  gpus?: number;
  diskBytes?: number;
}

const limit = (name: string, problem: string) =>
  invalidField(fieldPath("body.resourceLimits", name), problem);

export function parseResourceLimits(limits: Record<string, string>): ParsedResources {
  const parsed: ParsedResources = {};
  for (const [name, quantity] of Object.entries(limits)) {
    if (name === "cpu") {
      parsed.cpuMillis =
        parseCpuMillis(quantity) ??
        invalid(limit("cpu", `${JSON.stringify(quantity)} is not a CPU quantity like "500m" or "2"`));
    } else if (name === "memory") {
      parsed.memoryBytes =
        parseMemoryBytes(quantity) ??
        invalid(limit("memory", `${JSON.stringify(quantity)} is not a memory quantity like "512Mi"`));
      if (parsed.memoryBytes < 6 * 2 ** 20) invalid(limit("memory", "must be at least 6Mi"));
    } else if (name === "ephemeral-storage") {
      parsed.diskBytes =
        parseMemoryBytes(quantity) ??
        invalid(limit("ephemeral-storage", `${JSON.stringify(quantity)} is not a size like "10Gi"`));
      if (parsed.diskBytes < 16 * 2 ** 20 || parsed.diskBytes > 2 ** 40)
        invalid(limit("ephemeral-storage", "must be between 16Mi and 1Ti"));
    } else if (name === "gpu") {
      parsed.gpus =
        parseGpuCount(quantity) ?? invalid(limit("gpu", `${JSON.stringify(quantity)} is not a GPU count`));
    }
    // Other resource names are accepted and ignored, as the spec allows new ones.
  }
  return parsed;
}

/** A host path is allowed only under an operator-listed prefix, after normalization. */
export function hostPathAllowed(path: string, allowedPrefixes: readonly string[]): boolean {
  if (!path.startsWith("/") || path.split("/").includes("..")) return false;
  const normalized = path.replace(/\/+/g, "/").replace(/\/$/, "") || "/";
  return allowedPrefixes.some((prefix) => {
    const base = prefix.replace(/\/+$/, "");
    return normalized === base || normalized.startsWith(`${base}/`);
  });
}
