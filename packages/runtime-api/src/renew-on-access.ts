import { isPaddockError, type Logger } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import { renewOnAccessKey, renewOnAccessSeconds } from "./lifecycle-extensions.js";

/** Most sandboxes whose `access.renew.extend.seconds` is remembered (extensions never change). */
const remembered = 10_000;

/**
 * OpenSandbox's renew-on-access (OSEP-0009, `extensions["access.renew.extend.seconds"]`): each
 * request through the proxy to a Running sandbox with an expiry moves that expiry to now plus the
 * extension, never earlier. The expiry is written only when that moves it by a tenth of the
 * extension or more, so a busy sandbox costs one write per such interval, not one per request.
 */
export class RenewOnAccess {
  private readonly extensionSeconds = new Map<string, number | null>();

  constructor(
    private readonly sandboxes: SandboxOperations,
    private readonly logger?: Logger,
  ) {}

  /** Renews in the background; the request it counts is never held up or failed by it. */
  accessed(sandboxId: string): void {
    this.renew(sandboxId).catch((error) => {
      // A refusal (another request renewed first, the sandbox went away) leaves nothing to do.
      if (!isPaddockError(error)) this.logger?.warn({ sandboxId, err: error }, "renewing on access failed");
    });
  }

  private async renew(sandboxId: string): Promise<void> {
    if (this.extensionSeconds.get(sandboxId) === null) return;
    const sandbox = await this.sandboxes.get(sandboxId);
    const seconds = this.remember(sandboxId, sandbox.extensions[renewOnAccessKey]);
    if (seconds === null || sandbox.status.state !== "Running" || !sandbox.expiresAt) return;
    const wanted = Date.now() + seconds * 1000;
    if (wanted - Date.parse(sandbox.expiresAt) < seconds * 100) return;
    await this.sandboxes.renew(sandboxId, new Date(wanted));
  }

  private remember(sandboxId: string, value: string | undefined): number | null {
    let seconds: number | null = null;
    if (value !== undefined) {
      try {
        seconds = renewOnAccessSeconds(value);
      } catch {
        // Kept from before the key was checked at create: not a valid request for renewal.
      }
    }
    if (this.extensionSeconds.size >= remembered && !this.extensionSeconds.has(sandboxId))
      this.extensionSeconds.delete(this.extensionSeconds.keys().next().value as string);
    this.extensionSeconds.set(sandboxId, seconds);
    return seconds;
  }
}
