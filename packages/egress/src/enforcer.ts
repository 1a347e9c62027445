import {
  type CompiledRule,
  compileRules,
  decideName,
  type NetworkPolicy,
} from "@paddock/common/egress-policy";
import { readAddresses } from "./dns-wire.js";
import { LearnedAddresses } from "./learned-addresses.js";
import { NftQueue } from "./nft.js";
import { renderRuleset, type Upstream } from "./nft-ruleset.js";
import type { PolicyStore } from "./policy-store.js";

/**
 * Owns the live policy: installs it in the kernel, answers the DNS proxy's questions about it,
 * and keeps the file a restarted sidecar reads. Changes are serialised; a change that fails
 * leaves the previous policy enforced, in the kernel, in memory and on disk.
 */
export class Enforcer {
  private policy: NetworkPolicy;
  private rules: CompiledRule[];
  private readonly nft: NftQueue;
  private readonly learned: LearnedAddresses;
  private changing: Promise<unknown> = Promise.resolve();

  constructor(
    initial: NetworkPolicy,
    private readonly store: PolicyStore,
    private readonly upstream: Upstream,
    private readonly forwarderPort: number,
    run?: (script: string) => Promise<void>,
  ) {
    this.policy = initial;
    this.rules = compileRules(initial);
    this.nft = new NftQueue(run);
    this.learned = new LearnedAddresses((script) => this.nft.apply(script));
  }

  current(): NetworkPolicy {
    return this.policy;
  }

  /** First install. Addresses learned before a restart stay: they were learned under this policy. */
  async install(): Promise<void> {
    this.store.save(this.policy);
    await this.nft.apply(this.ruleset(this.policy, []));
  }

  /** Replaces the policy; `change` computes the new one from the current one (and may throw). */
  update(change: (policy: NetworkPolicy) => NetworkPolicy): Promise<NetworkPolicy> {
    const next = this.changing.then(async () => {
      const previous = this.policy;
      const policy = change(previous);
      const rules = compileRules(policy);
      this.store.save(policy);
      try {
        const allowed = (name: string) => decideName(rules, policy.defaultAction, name) === "allow";
        await this.nft.apply(this.ruleset(policy, this.learned.rebuildLines(allowed)));
      } catch (error) {
        this.store.save(previous);
        throw error;
      }
      this.policy = policy;
      this.rules = rules;
      return policy;
    });
    this.changing = next.catch(() => undefined);
    return next;
  }

  allows(name: string): boolean {
    return decideName(this.rules, this.policy.defaultAction, name) === "allow";
  }

  /** Under default deny, an allowed name's addresses must be in the kernel before the answer leaves. */
  async learn(name: string, answer: Buffer): Promise<void> {
    if (this.policy.defaultAction !== "deny") return;
    const records = readAddresses(answer);
    if (records.length > 0) await this.learned.learn(name, records);
  }

  private ruleset(policy: NetworkPolicy, setLines: string[]): string {
    const base = renderRuleset({ policy, upstream: this.upstream, forwarderPort: this.forwarderPort });
    return setLines.length > 0 ? `${base}${setLines.join("\n")}\n` : base;
  }
}
