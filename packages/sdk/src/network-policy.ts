import type { Transport } from "./transport.js";
import type { EnforcedNetworkPolicy, NetworkRule } from "./types.js";
import { encodePart, queryOf } from "./url.js";

/**
 * `sandbox.networkPolicy`: the sandbox's live outbound policy (sandboxes created with a
 * `networkPolicy`). Changes apply to new connections as soon as the call returns.
 */
export class NetworkPolicy {
  constructor(
    private readonly transport: Transport,
    private readonly sandboxId: string,
  ) {}

  /** The enforced policy and its mode (allow_all, deny_all, enforcing). */
  get(): Promise<EnforcedNetworkPolicy> {
    return this.transport.json("GET", this.path);
  }

  /** Puts `rules` ahead of the existing ones; a rule for a target already present replaces it. */
  update(rules: NetworkRule[]): Promise<EnforcedNetworkPolicy> {
    return this.transport.json("PATCH", this.path, { egress: rules });
  }

  /** Removes the rules for these targets (unknown targets are ignored). */
  remove(targets: string[]): Promise<EnforcedNetworkPolicy> {
    return this.transport.json("DELETE", `${this.path}${queryOf({ target: targets })}`);
  }

  private get path(): string {
    return `/sandboxes/${encodePart(this.sandboxId)}/network-policy`;
  }
}
