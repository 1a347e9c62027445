import { PaddockError } from "@paddock/common";
import { ControlPlaneErrors } from "./errors.js";

/**
 * Paths and commands reach the sandbox's kernel as C strings, which end at the first NUL: a NUL
 * can only truncate them or make execd refuse them, so it is refused here with a 400. Every other
 * character is passed through as sent: Linux file names may hold any byte but "/" and NUL, so
 * U+202E (right-to-left override) and U+FEFF (byte order mark) name files like any other letter.
 */
export function assertSandboxPath(path: string, field = "path"): void {
  if (path.includes("\0"))
    throw new PaddockError(ControlPlaneErrors.invalidPath, `${field} contains a NUL character`);
}

export function assertCommand(command: string, env: Record<string, string> = {}): void {
  if (command.includes("\0"))
    throw new PaddockError(ControlPlaneErrors.invalidCommand, "command contains a NUL character");
  for (const [name, value] of Object.entries(env)) {
    if (name.includes("\0") || value.includes("\0"))
      throw new PaddockError(
        ControlPlaneErrors.invalidCommand,
        `env ${JSON.stringify(name)} contains a NUL character`,
      );
  }
}
