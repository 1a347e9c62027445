import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError } from "./output.js";

/** What `paddock login` keeps between runs. */
export interface StoredConfig {
  baseUrl?: string;
  credential?: {
    /** A session token from POST /auth/login, or an API key (`paddock login --api-key`). */
    kind: "session" | "api-key";
    secret: string;
    email?: string;
    expiresAt?: string;
  };
}

/** `$XDG_CONFIG_HOME/paddock/config.json`, else `~/.config/paddock/config.json`. */
export function configPath(): string {
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "paddock", "config.json");
}

export function readConfig(): StoredConfig {
  const path = configPath();
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  try {
    return JSON.parse(text) as StoredConfig;
  } catch {
    throw new CliError(`${path} is not valid JSON; fix or delete it`, "invalid_config");
  }
}

/**
 * Replaces the stored configuration. The file holds a credential: only its owner may read it
 * (0600, in a 0700 directory), and it is written whole or not at all (rename over the old one).
 */
export function writeConfig(config: StoredConfig): void {
  const path = configPath();
  const directory = dirname(path);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  chmodSync(directory, 0o700);
  const next = `${path}.${process.pid}.tmp`;
  writeFileSync(next, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  renameSync(next, path);
}
