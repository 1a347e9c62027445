import { Errors, fieldPath, invalidField, isWellFormed, PaddockError } from "@paddock/common";
import { ControlPlaneErrors } from "../http/errors.js";

/**
 * A path of a sandbox's file routes: absolute, since nothing fixes what a relative path would be
 * relative to (execd's own working directory is no one's choice), and without a NUL: paths reach
 * the sandbox's kernel as C strings, which end at the first NUL, so a NUL could only truncate
 * them. Every other character is passed through as sent: Linux file names may hold any byte but
 * "/" and NUL, so U+202E (right-to-left override) and U+FEFF (byte order mark) name files like
 * any other letter. Text that is not Unicode is refused before this (`invalid_unicode`); checked
 * here too for callers that do not come through a parsed body or query.
 */
export function assertSandboxPath(path: string, field = "body.path"): void {
  assertText(path, field, ControlPlaneErrors.invalidPath);
  if (!path.startsWith("/"))
    throw new PaddockError(
      ControlPlaneErrors.invalidPath,
      invalidField(field, `must be an absolute path (starting with /), not ${JSON.stringify(path)}`),
    );
}

/** A working directory: no NUL and Unicode; a relative one is execd's to resolve, as it always was. */
export function assertWorkingDirectory(cwd: string): void {
  assertText(cwd, "body.cwd", ControlPlaneErrors.invalidPath);
}

/** `part` is where the command came: the body of a run, the query of a terminal. */
export function assertCommand(command: string, env: Record<string, string> = {}, part = "body"): void {
  assertText(command, fieldPath(part, "command"), ControlPlaneErrors.invalidCommand);
  for (const [name, value] of Object.entries(env)) {
    assertText(name, fieldPath(part, "env", name), ControlPlaneErrors.invalidCommand);
    assertText(value, fieldPath(part, "env", name), ControlPlaneErrors.invalidCommand);
  }
}

function assertText(text: string, field: string, nul: typeof ControlPlaneErrors.invalidPath): void {
  if (text.includes("\0")) throw new PaddockError(nul, invalidField(field, "contains a NUL character"));
  if (!isWellFormed(text))
    throw new PaddockError(
      Errors.invalidUnicode,
      invalidField(field, "is not Unicode text (it holds a lone UTF-16 surrogate)"),
    );
}
