import { badRequest, ExecdError, isRecord } from "./http.js";

/** A create request as accepted (wire names as the spec spells them); echoed by the state route. */
export interface SessionSpec {
  profile?: "strict" | "balanced";
  workspace: { path: string; mode: "overlay" | "ro" | "rw" };
  share_net: boolean;
  env_passthrough?: { mode?: "allow" | "deny"; keys?: string[] };
  uid: number;
  gid: number;
  uid_mode: "setpriv" | "userns";
  idle_timeout_seconds?: number;
}

const notSupported = (message: string) => new ExecdError(501, "not_supported", message);

/**
 * Checks a CreateIsolatedSessionRequest. Shapes that are wrong answer 400; options this execd
 * does not offer answer 501 `not_supported` with the reason, before anything is created.
 */
export function parseSessionSpec(body: Record<string, unknown>): SessionSpec {
  const workspace = body.workspace;
  if (!isRecord(workspace)) throw badRequest("workspace is required: {path, mode}");
  const path = workspace.path;
  if (typeof path !== "string" || !path.startsWith("/"))
    throw badRequest("workspace.path must be an absolute path");
  const normalized = path.length > 1 ? path.replace(/\/+$/, "") : path;
  if (normalized === "/" || /[,:\\\n]/.test(normalized) || normalized.split("/").includes(".."))
    throw badRequest("workspace.path must be a directory other than / without , : \\ or ..");
  if (["/proc", "/sys", "/dev", "/opt/paddock", "/run/paddock-isolated"].some((p) => within(normalized, p)))
    throw badRequest(`workspace.path ${normalized} is a system path`);
  const mode = workspace.mode ?? "overlay";
  if (mode !== "overlay" && mode !== "ro" && mode !== "rw")
    throw badRequest("workspace.mode must be overlay, ro or rw");

  const profile = body.profile;
  if (profile !== undefined && profile !== "strict" && profile !== "balanced")
    throw badRequest("profile must be strict or balanced");
  for (const key of ["extra_writable", "binds"]) {
    const value = body[key];
    if (value !== undefined && !Array.isArray(value)) throw badRequest(`${key} must be an array`);
    if (Array.isArray(value) && value.length > 0)
      throw notSupported(`${key} is not supported: a session writes only through its workspace overlay`);
  }
  if (body.share_net !== undefined && typeof body.share_net !== "boolean")
    throw badRequest("share_net must be a boolean");
  if (body.share_net === false) {
    throw notSupported(
      "share_net: false is not supported: sandboxes may not create network namespaces; a session shares the sandbox's network (and its egress policy)",
    );
  }
  const uid = optionalId(body, "uid");
  const gid = optionalId(body, "gid");
  if ((uid ?? 0) !== 0 || (gid ?? 0) !== 0)
    throw notSupported("only uid 0 and gid 0 are supported: the session's user namespace maps root alone");
  const uidMode = body.uid_mode ?? "userns";
  if (uidMode !== "setpriv" && uidMode !== "userns") throw badRequest("uid_mode must be setpriv or userns");

  const passthrough = body.env_passthrough;
  let envPassthrough: SessionSpec["env_passthrough"];
  if (passthrough !== undefined) {
    if (!isRecord(passthrough)) throw badRequest("env_passthrough must be {mode, keys}");
    if (passthrough.mode !== undefined && passthrough.mode !== "allow" && passthrough.mode !== "deny")
      throw badRequest("env_passthrough.mode must be allow or deny");
    const keys = passthrough.keys;
    if (keys !== undefined && (!Array.isArray(keys) || !keys.every((key) => typeof key === "string")))
      throw badRequest("env_passthrough.keys must be an array of strings");
    envPassthrough = {
      ...(passthrough.mode ? { mode: passthrough.mode } : {}),
      ...(keys ? { keys: keys as string[] } : {}),
    };
  }
  const idle = body.idle_timeout_seconds;
  if (idle !== undefined && (typeof idle !== "number" || !Number.isInteger(idle) || idle < 1))
    throw badRequest("idle_timeout_seconds must be an integer ≥ 1");

  return {
    ...(profile ? { profile } : {}),
    workspace: { path: normalized, mode },
    share_net: true,
    ...(envPassthrough ? { env_passthrough: envPassthrough } : {}),
    uid: 0,
    gid: 0,
    uid_mode: uidMode,
    ...(idle !== undefined ? { idle_timeout_seconds: idle } : {}),
  };
}

function optionalId(body: Record<string, unknown>, key: string): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw badRequest(`${key} must be an unsigned 32-bit integer`);
  return value;
}

function within(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`);
}
