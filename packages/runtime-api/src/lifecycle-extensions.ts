import {
  Errors,
  fieldPath,
  invalidField,
  isPaddockError,
  notOneOf,
  PaddockError,
  unknownProperty,
} from "@paddock/common";
import type { CreateSandboxInput, Sandbox, SandboxLifecycle } from "@paddock/runtime";

/**
 * A sandbox's lifecycle policy (decision 0190) as OpenSandbox `extensions` (decision 0110): string
 * values under `paddock.lifecycle.`, since `extensions` is a map of strings. What a create leaves
 * out takes the runtime's defaults (no idle timeout, kill at the timeout, resume on use).
 */
export const lifecyclePrefix = "paddock.lifecycle.";

/** OpenSandbox's well-known key for renew-on-access (OSEP-0009): seconds each access extends the expiry by. */
export const renewOnAccessKey = "access.renew.extend.seconds";
const renewOnAccessBounds = { min: 300, max: 86_400 };

type LifecyclePolicy = NonNullable<CreateSandboxInput["lifecycle"]>;
type Field = keyof LifecyclePolicy;

/** Seconds as a decimal string, or "never"; longer than ten years is a typo. */
const maxSeconds = 10 * 365 * 86_400;

const parsers: Record<Field, (value: string, where: string) => LifecyclePolicy[Field]> = {
  onTimeout: (value, where) => {
    if (value !== "kill" && value !== "pause") throw refused(notOneOf(where, ["kill", "pause"], value));
    return value;
  },
  idleTimeout: (value, where) => secondsOrNever(value, where),
  processesKeepAwake: (value, where) => flag(value, where),
  autoResume: (value, where) => flag(value, where),
  keepMemory: (value, where) => flag(value, where),
  maxPaused: (value, where) => secondsOrNever(value, where),
};

const knownKeys = Object.keys(parsers).map((field) => lifecyclePrefix + field);

function refused(message: string): PaddockError {
  return new PaddockError(Errors.invalidRequest, message);
}

const where = (key: string) => fieldPath("body.extensions", key);

function secondsOrNever(value: string, at: string): number | null {
  if (value === "never") return null;
  const seconds = /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!(seconds <= maxSeconds))
    throw refused(
      invalidField(
        at,
        `must be a whole number of seconds from 1 to ${maxSeconds}, or "never"; got ${JSON.stringify(value.slice(0, 40))}`,
      ),
    );
  return seconds;
}

function flag(value: string, at: string): boolean {
  if (value !== "true" && value !== "false") throw refused(notOneOf(at, ["true", "false"], value));
  return value === "true";
}

/**
 * The lifecycle a create's `extensions` ask for. A `paddock.` key this server does not know is a
 * 400 (a typo must not quietly leave a sandbox without its idle timeout); other keys are the
 * caller's and pass through. `access.renew.extend.seconds` is checked as OpenSandbox checks it.
 */
export function lifecycleFromExtensions(extensions: Record<string, string> | undefined): LifecyclePolicy {
  const policy: LifecyclePolicy = {};
  for (const [key, value] of Object.entries(extensions ?? {})) {
    if (key === renewOnAccessKey) {
      renewOnAccessSeconds(value);
      continue;
    }
    if (!key.startsWith("paddock.")) continue;
    const field = key.slice(lifecyclePrefix.length) as Field;
    if (!key.startsWith(lifecyclePrefix) || !Object.hasOwn(parsers, field))
      throw refused(unknownProperty("body.extensions", key, knownKeys));
    Object.assign(policy, { [field]: parsers[field](value, where(key)) });
  }
  return policy;
}

/** The seconds of `access.renew.extend.seconds`: a decimal integer from 300 to 86400, else a 400. */
export function renewOnAccessSeconds(value: string): number {
  const seconds = /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
  const { min, max } = renewOnAccessBounds;
  if (!(seconds >= min && seconds <= max))
    throw refused(
      invalidField(
        where(renewOnAccessKey),
        `must be a whole number of seconds from ${min} to ${max}; got ${JSON.stringify(value.slice(0, 40))}`,
      ),
    );
  return seconds;
}

/**
 * The runtime names lifecycle fields as its own input (`body.lifecycle.idleTimeout`); a /v1 caller
 * sent them as extensions, so its refusals name those keys (the runtime alone knows the operator's
 * upper bound on seconds).
 */
export function inExtensionTerms(error: unknown): unknown {
  const field = /^body\.lifecycle\.([A-Za-z]+):/;
  if (!isPaddockError(error) || error.status !== 400 || !field.test(error.message)) return error;
  const renamed = error.message
    .replace(field, (_match, name: string) => `${where(lifecyclePrefix + name)}:`)
    .replace(/, or null$/, ', or "never"');
  return new PaddockError(Errors.invalidRequest, renamed);
}

/** Whether the sandbox may go to sleep without being asked, or counts accesses: only the proxy sees them. */
export function needsServerProxy(sandbox: Sandbox): boolean {
  const lifecycle: SandboxLifecycle = sandbox.lifecycle;
  return (
    lifecycle.idleTimeout !== null ||
    lifecycle.onTimeout === "pause" ||
    sandbox.extensions[renewOnAccessKey] !== undefined
  );
}

/** What /v1 says of a paused sandbox's sleep in its status message. */
export function pauseDescription(sandbox: Sandbox): string | undefined {
  const { state } = sandbox.status;
  const pause = sandbox.pause;
  if (!pause || (state !== "Paused" && state !== "Pausing")) return undefined;
  const depth =
    pause.to === "memory"
      ? "in memory, resumes where it stopped"
      : pause.memoryPreserved
        ? "to disk, processes and memory kept"
        : "to disk, processes restart on resume (files kept)";
  return `${state === "Paused" ? "paused" : "pausing"} ${depth}`;
}
