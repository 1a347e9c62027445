import { Errors, PaddockError } from "@paddock/common";
import { ExecdClient, type SandboxOperations } from "@paddock/runtime";
import type { SecretStore } from "./secret-store.js";

/**
 * Secrets named on a sandbox create, as environment variables for what the sandbox runs.
 *
 * The values go to the sandbox's execd once it is Running, never into the create input: that
 * input becomes the container's configuration, which the engine keeps on disk, shows in
 * `docker inspect` and copies into snapshot images. execd holds them in memory and gives them to
 * every command, session and code context it starts.
 */
export class SandboxSecrets {
  constructor(
    private readonly secrets: SecretStore,
    private readonly sandboxes: SandboxOperations,
  ) {}

  /** Checks the request and opens the values before any container exists. */
  async resolve(
    owner: string,
    injection: Record<string, string> | undefined,
    env: Record<string, string> | undefined,
  ): Promise<Record<string, string>> {
    if (!injection) return {};
    const clash = Object.keys(injection).filter((name) => env && Object.hasOwn(env, name));
    if (clash.length > 0) {
      throw new PaddockError(
        Errors.invalidRequest,
        `${clash.join(", ")} given in both env and secrets; name each variable once`,
      );
    }
    return this.secrets.resolve(owner, injection);
  }

  /** Hands the values to the new sandbox; a sandbox that cannot take them is deleted. */
  async deliver(sandboxId: string, owner: string, values: Record<string, string>): Promise<void> {
    if (Object.keys(values).length === 0) return;
    try {
      const execd = await ExecdClient.of(this.sandboxes, sandboxId, owner);
      await execd.setEnvironment(values, AbortSignal.timeout(10_000));
    } catch (error) {
      await this.sandboxes.delete(sandboxId, owner).catch(() => undefined);
      throw new PaddockError(
        Errors.endpointUnavailable,
        "the new sandbox did not take its secrets and was deleted; try again",
        { cause: error },
      );
    }
  }
}
