import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type NetworkPolicy, parsePolicy } from "@paddock/common/egress-policy";

/** Where the live policy is kept, so a restarted sidecar re-installs what was enforced last. */
export const DEFAULT_POLICY_FILE = "/var/lib/paddock-egress/policy.json";

export class PolicyStore {
  constructor(private readonly file = process.env.PADDOCK_EGRESS_STATE ?? DEFAULT_POLICY_FILE) {}

  /** The saved policy, or undefined when there is none (first start) or it cannot be read. */
  load(): NetworkPolicy | undefined {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return undefined;
    }
    return parsePolicy(JSON.parse(text));
  }

  /** Written to a temporary file and renamed: a crash leaves the old file or the new one. */
  save(policy: NetworkPolicy): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(policy)}\n`, { mode: 0o600 });
    renameSync(temporary, this.file);
  }
}
