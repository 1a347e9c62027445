import { Errors, ExecdErrors, PaddockError } from "@paddock/common/errors";
import { fieldPath, invalidField, missingProperty, notOneOf } from "@paddock/common/validation-messages";
import { isRecord } from "../json.js";

/** A field of the request refused, with what is wrong with it. */
const invalid = (field: string, problem: string) =>
  new PaddockError(Errors.invalidRequest, invalidField(field, problem));

/** A create request as accepted (wire names as the spec spells them); echoed by the state route. */
export interface SessionSpec {
  profile?: "strict" | "balanced";
  workspace: { path: string; mode: "overlay" | "ro" | "rw" };
  /** Paths of the sandbox mounted into the session; `extra_writable` entries are read-write binds. */
  binds: Bind[];
  share_net: boolean;
  env_passthrough?: { mode?: "allow" | "deny"; keys?: string[] };
  uid: number;
  gid: number;
  uid_mode: "setpriv" | "userns";
  idle_timeout_seconds?: number;
}

export interface Bind {
  source: string;
  dest: string;
  readonly: boolean;
}

/** Paths a session may neither overlay nor bind: the runtime's own and execd's. */
const systemPaths = ["/proc", "/sys", "/dev", "/opt/paddock", "/run/paddock-isolated"];

const notSupported = (message: string) => new PaddockError(ExecdErrors.notSupported, message);

/**
 * Checks a CreateIsolatedSessionRequest. Shapes that are wrong answer 400; options this execd
 * does not offer answer 501 `not_supported` with the reason, before anything is created.
 */
export function parseSessionSpec(body: Record<string, unknown>): SessionSpec {
  const workspace = body.workspace;
  if (workspace === undefined)
    throw new PaddockError(Errors.invalidRequest, missingProperty("body", "workspace"));
  if (!isRecord(workspace)) throw invalid("body.workspace", "must be an object {path, mode}");
  const normalized = sessionPath(workspace.path, "body.workspace.path");
  const mode = workspace.mode ?? "overlay";
  if (mode !== "overlay" && mode !== "ro" && mode !== "rw")
    throw new PaddockError(
      Errors.invalidRequest,
      notOneOf("body.workspace.mode", ["overlay", "ro", "rw"], mode),
    );

  const profile = body.profile;
  if (profile !== undefined && profile !== "strict" && profile !== "balanced")
    throw new PaddockError(Errors.invalidRequest, notOneOf("body.profile", ["strict", "balanced"], profile));
  const binds = [...parseBinds(body.binds), ...parseExtraWritable(body.extra_writable)];
  if (body.share_net !== undefined && typeof body.share_net !== "boolean")
    throw invalid("body.share_net", "must be boolean");
  const uid = optionalId(body, "uid");
  const gid = optionalId(body, "gid");
  if ((uid ?? 0) !== 0 || (gid ?? 0) !== 0)
    throw notSupported("only uid 0 and gid 0 are supported: the session's user namespace maps root alone");
  const uidMode = body.uid_mode ?? "userns";
  if (uidMode !== "setpriv" && uidMode !== "userns")
    throw new PaddockError(Errors.invalidRequest, notOneOf("body.uid_mode", ["setpriv", "userns"], uidMode));

  const passthrough = body.env_passthrough;
  let envPassthrough: SessionSpec["env_passthrough"];
  if (passthrough !== undefined) {
    if (!isRecord(passthrough)) throw invalid("body.env_passthrough", "must be an object {mode, keys}");
    if (passthrough.mode !== undefined && passthrough.mode !== "allow" && passthrough.mode !== "deny")
      throw new PaddockError(
        Errors.invalidRequest,
        notOneOf("body.env_passthrough.mode", ["allow", "deny"], passthrough.mode),
      );
    const keys = passthrough.keys;
    if (keys !== undefined && (!Array.isArray(keys) || !keys.every((key) => typeof key === "string")))
      throw invalid("body.env_passthrough.keys", "must be an array of strings");
    envPassthrough = {
      ...(passthrough.mode ? { mode: passthrough.mode } : {}),
      ...(keys ? { keys: keys as string[] } : {}),
    };
  }
  const idle = body.idle_timeout_seconds;
  if (idle !== undefined && (typeof idle !== "number" || !Number.isInteger(idle) || idle < 1))
    throw invalid("body.idle_timeout_seconds", "must be integer >= 1");

  return {
    ...(profile ? { profile } : {}),
    workspace: { path: normalized, mode },
    binds,
    share_net: body.share_net !== false,
    ...(envPassthrough ? { env_passthrough: envPassthrough } : {}),
    uid: 0,
    gid: 0,
    uid_mode: uidMode,
    ...(idle !== undefined ? { idle_timeout_seconds: idle } : {}),
  };
}

/** An absolute path a session may mount: no `..`, not `/` nor a system path, without `,` `:` `\\`. */
function sessionPath(path: unknown, field: string): string {
  if (typeof path !== "string" || !path.startsWith("/")) throw invalid(field, "must be an absolute path");
  const normalized = path.length > 1 ? path.replace(/\/+$/, "") : path;
  if (normalized === "/" || /[,:\\\n]/.test(normalized) || normalized.split("/").includes(".."))
    throw invalid(field, "must be a path other than / without , : \\ or ..");
  if (systemPaths.some((system) => within(normalized, system)))
    throw invalid(field, `${normalized} is a system path`);
  return normalized;
}

function parseBinds(value: unknown): Bind[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid("body.binds", "must be an array of {source, dest, readonly}");
  return value.map((entry, index) => {
    if (!isRecord(entry)) throw invalid(`body.binds[${index}]`, "must be an object {source, dest, readonly}");
    const source = sessionPath(entry.source, `body.binds[${index}].source`);
    const dest = entry.dest === undefined ? source : sessionPath(entry.dest, `body.binds[${index}].dest`);
    if (entry.readonly !== undefined && typeof entry.readonly !== "boolean")
      throw invalid(`body.binds[${index}].readonly`, "must be boolean");
    return { source, dest, readonly: entry.readonly === true };
  });
}

/** `extra_writable` paths are read-write binds of a path onto itself. */
function parseExtraWritable(value: unknown): Bind[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid("body.extra_writable", "must be an array of paths");
  return value.map((entry, index) => {
    const path = sessionPath(entry, `body.extra_writable[${index}]`);
    return { source: path, dest: path, readonly: false };
  });
}

function optionalId(body: Record<string, unknown>, key: string): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw invalid(fieldPath("body", key), "must be an unsigned 32-bit integer");
  return value;
}

function within(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`);
}
