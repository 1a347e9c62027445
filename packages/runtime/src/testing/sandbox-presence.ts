import type { SandboxService } from "../sandbox-service.js";

/** Whether the service still finds sandbox `id`: what a test polls until a reap or delete is done. */
export function presenceOf(sandboxes: SandboxService, id: string): Promise<"present" | "gone"> {
  return sandboxes.get(id).then(
    () => "present",
    () => "gone",
  );
}
