import { execFileSync } from "node:child_process";
import { parsePolicy } from "@paddock/common/egress-policy";
import { describe, expect, it } from "vitest";
import { LearnedAddresses } from "./learned-addresses.js";
import { renderRuleset, TABLE } from "./nft-ruleset.js";

/** Runs nft scripts in a network namespace of its own, which vanishes with the process. */
function inFreshNamespace(...scripts: string[]): { listing: string; failures: string[] } {
  const failures: string[] = [];
  const steps = scripts.map(
    (script, index) => `nft -f - <<'EOF${index}' || echo "failed ${index}"\n${script}EOF${index}\n`,
  );
  const output = execFileSync(
    "unshare",
    ["--net", "sh", "-c", `${steps.join("")}echo ===; nft list table ${TABLE}`],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const [head = "", listing = ""] = output.split("===\n");
  for (const line of head.split("\n")) if (line.startsWith("failed")) failures.push(line);
  return { listing, failures };
}

const enforcement = {
  upstream: { family: 4 as const, address: "127.0.0.11", port: 53 },
  forwarderPort: 42424,
  policy: parsePolicy({
    defaultAction: "deny",
    egress: [
      { action: "deny", target: "10.1.0.0/16" },
      { action: "allow", target: "10.0.0.0/8" },
      { action: "allow", target: "2001:db8::/32" },
      { action: "allow", target: "pypi.org" },
    ],
  }),
};

describe("nft ruleset", () => {
  it("is accepted by the kernel, keeps rule order, and can be applied again", () => {
    const script = renderRuleset(enforcement);
    const { listing, failures } = inFreshNamespace(script, script);
    expect(failures).toEqual([]);
    const order = [
      "ip daddr 10.1.0.0/16 goto refuse",
      "ip daddr 10.0.0.0/8 accept",
      "ip6 daddr 2001:db8::/32 accept",
      "ip daddr @dns4 accept",
    ];
    const positions = order.map((line) => listing.indexOf(line));
    expect(positions.every((position) => position > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(listing).toContain("udp sport 42424 return");
    expect(listing).toContain("udp dport 42424 goto refuse");
    // Applied twice, the chains hold one copy of each rule.
    expect(listing.split("udp dport 53 redirect").length).toBe(2);
  });

  it("leaves out the final refusal under default allow", () => {
    const { listing, failures } = inFreshNamespace(
      renderRuleset({
        ...enforcement,
        policy: parsePolicy({ defaultAction: "allow", egress: [{ action: "deny", target: "192.0.2.0/24" }] }),
      }),
    );
    expect(failures).toEqual([]);
    expect(listing).toContain("ip daddr 192.0.2.0/24 goto refuse");
    expect(listing).not.toMatch(/^\s*goto refuse$/m);
  });

  it("adds learned addresses with a timeout and keeps only those whose names stay allowed", async () => {
    const scripts: string[] = [];
    const learned = new LearnedAddresses(async (script) => {
      scripts.push(script);
    });
    await learned.learn("pypi.org", [{ family: 4, address: "192.0.2.1", ttl: 300 }]);
    await learned.learn("files.example", [{ family: 6, address: "2001:db8::5", ttl: 30 }]);
    // Still fresh: no second transaction.
    await learned.learn("pypi.org", [{ family: 4, address: "192.0.2.1", ttl: 300 }]);
    expect(scripts).toHaveLength(2);
    const rebuild = `${learned.rebuildLines((name) => name === "pypi.org").join("\n")}\n`;
    const { listing, failures } = inFreshNamespace(renderRuleset(enforcement), ...scripts, rebuild);
    expect(failures).toEqual([]);
    // TTL 300 s plus the grace period: never shorter than the TTL.
    expect(listing).toMatch(/192\.0\.2\.1 timeout 6m/);
    expect(listing).not.toContain("2001:db8::5");
  });

  it("applies nothing from a transaction that fails", () => {
    const broken = `${renderRuleset(enforcement).replace("10.0.0.0/8 accept", "10.0.0.0/8 allow")}`;
    const { listing, failures } = inFreshNamespace(renderRuleset(enforcement), broken);
    expect(failures).toEqual(["failed 1"]);
    expect(listing).toContain("ip daddr 10.0.0.0/8 accept");
  });
});
