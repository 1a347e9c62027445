import { Errors, invalidField, PaddockError } from "@paddock/common";
import { type CreateSandboxInput, defaultLifecycle, type SandboxLifecycle } from "./model.js";

function invalid(message: string): never {
  throw new PaddockError(Errors.invalidRequest, message);
}

/** A whole number of seconds from 1 to `max`, or null; anything else is a 400 naming the field. */
function seconds(field: string, value: unknown, max: number): void {
  if (value === null) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max)
    invalid(invalidField(field, `must be a whole number of seconds from 1 to ${max}, or null`));
}

/**
 * A create's lifecycle policy, checked and completed with the defaults (decision 0190). `max`
 * bounds the second counts (`server.max_sandbox_timeout_seconds`).
 */
export function resolveLifecycle(input: CreateSandboxInput, max: number): SandboxLifecycle {
  const given = input.lifecycle ?? {};
  const where = "body.lifecycle";
  if (given.onTimeout !== undefined && given.onTimeout !== "kill" && given.onTimeout !== "pause")
    invalid(invalidField(`${where}.onTimeout`, 'must be "kill" or "pause"'));
  if (given.idleTimeout !== undefined) seconds(`${where}.idleTimeout`, given.idleTimeout, max);
  if (given.maxPaused !== undefined) seconds(`${where}.maxPaused`, given.maxPaused, 10 * 365 * 86_400);
  for (const flag of ["processesKeepAwake", "autoResume", "keepMemory"] as const) {
    if (given[flag] !== undefined && typeof given[flag] !== "boolean")
      invalid(invalidField(`${where}.${flag}`, "must be true or false"));
  }
  const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...defaultLifecycle, ...defined, timeout: input.timeout ?? null };
}

/** When a sandbox used at `from` idles out; undefined when it never does. */
export function idleAtFrom(lifecycle: SandboxLifecycle, from: number): string | undefined {
  return lifecycle.idleTimeout === null
    ? undefined
    : new Date(from + lifecycle.idleTimeout * 1000).toISOString();
}
