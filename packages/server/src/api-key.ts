import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { newSecret, type PaddockConfig } from "@paddock/common";

export class StartupError extends Error {
  override name = "StartupError";
}

export interface ResolvedApiKey {
  /** Undefined only when the operator explicitly allowed an unauthenticated runtime API. */
  key: string | undefined;
  /** Where it came from; a configured key is never printed. */
  source: "config" | "file" | "generated" | "none";
}

/**
 * The runtime API key: `server.api_key`, else `<data_dir>/api-key` when present, else a new one
 * written there when `generate` is set. Without any of these the server does not start, unless
 * `server.allow_unauthenticated` is true.
 */
export function resolveApiKey(config: PaddockConfig, generate: boolean): ResolvedApiKey {
  if (config.server.api_key) return { key: config.server.api_key, source: "config" };
  const file = join(resolve(config.server.data_dir), "api-key");
  if (existsSync(file)) return { key: readFileSync(file, "utf8").trim(), source: "file" };
  if (generate) {
    mkdirSync(resolve(config.server.data_dir), { recursive: true, mode: 0o700 });
    const key = newSecret("pdk_");
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
    return { key, source: "generated" };
  }
  if (config.server.allow_unauthenticated) return { key: undefined, source: "none" };
  throw new StartupError(
    `no API key for the runtime API: set server.api_key (or PADDOCK_SERVER_API_KEY), or start with --generate-key to create ${file}; to run without a key, set server.allow_unauthenticated = true`,
  );
}
