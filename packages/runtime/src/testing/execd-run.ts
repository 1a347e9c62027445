import { ExecdClient } from "../execd/client.js";
import type { SandboxOperations } from "../sandbox-operations.js";

/**
 * Runs `command` in sandbox `id` through execd, as every route does: it resolves the sandbox
 * through `target`, so it wakes a paused one and counts as its use. Resolves with its stdout.
 */
export async function runThroughExecd(
  sandboxes: SandboxOperations,
  id: string,
  command: string,
): Promise<string> {
  const execd = await ExecdClient.of(sandboxes, id);
  let stdout = "";
  for await (const event of execd.runCommand({ command })) {
    if (event.type === "stdout") stdout += event.text ?? "";
  }
  return stdout;
}
