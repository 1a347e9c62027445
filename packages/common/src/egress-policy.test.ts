import { describe, expect, it } from "vitest";
import {
  compileRules,
  decideName,
  MAX_RULES,
  mergeRules,
  parsePolicy,
  policyMode,
  removeRules,
} from "./egress-policy.js";
import { parseTarget, targetKey } from "./egress-targets.js";

const rule = (action: "allow" | "deny", target: string) => ({ action, target });

describe("targets", () => {
  it("parses names, wildcards, addresses and CIDRs into one canonical key", () => {
    const keys = [
      "Example.COM.",
      "*.pypi.org",
      "10.1.2.3",
      "10.1.2.3/8",
      "2001:DB8:0:0::1",
      "2001:db8::ff/32",
      "::/0",
    ];
    expect(keys.map((text) => targetKey(parseTarget(text)!))).toEqual([
      "example.com",
      "*.pypi.org",
      "10.1.2.3",
      "10.0.0.0/8",
      "2001:db8::1",
      "2001:db8::/32",
      "::/0",
    ]);
  });

  it("refuses what is not a target", () => {
    const bad = [
      "",
      "*",
      "*.",
      "a..b",
      "-a.com",
      "a-.com",
      "*.*.a.com",
      "a*.com",
      "1.2.3.4/33",
      "1.2.3/8",
      "10.0.0.0/",
      "::1/129",
      "300.1.1.1",
      "1.2.3.4/8/8",
      "http://a.com",
      "a.com:443",
      `${"a".repeat(64)}.com`,
    ];
    for (const text of bad) expect({ text, target: parseTarget(text) }).toEqual({ text, target: undefined });
  });
});

describe("policy", () => {
  it("reads null and {} as allow all, and a missing defaultAction as deny", () => {
    expect(parsePolicy(null)).toEqual({ defaultAction: "allow", egress: [] });
    expect(parsePolicy({})).toEqual({ defaultAction: "allow", egress: [] });
    expect(parsePolicy({ egress: [rule("allow", "A.com")] })).toEqual({
      defaultAction: "deny",
      egress: [rule("allow", "a.com")],
    });
  });

  it("lets the first matching rule decide a name; wildcards skip the apex", () => {
    const policy = parsePolicy({
      defaultAction: "deny",
      egress: [rule("deny", "bad.example.com"), rule("allow", "*.example.com"), rule("allow", "pypi.org")],
    });
    const decide = (name: string) => decideName(compileRules(policy), policy.defaultAction, name);
    expect(decide("api.example.com")).toBe("allow");
    expect(decide("bad.example.com")).toBe("deny");
    expect(decide("deep.bad.example.com")).toBe("allow");
    expect(decide("example.com")).toBe("deny");
    expect(decide("pypi.org")).toBe("allow");
    expect(decide("files.pypi.org")).toBe("deny");
    expect(decide("notexample.com")).toBe("deny");
  });

  it("merges PATCH rules ahead of existing ones; the first rule for a target wins", () => {
    const policy = parsePolicy({
      defaultAction: "deny",
      egress: [rule("allow", "a.com"), rule("allow", "b.com")],
    });
    const merged = mergeRules(policy, [
      rule("deny", "b.com"),
      rule("allow", "c.com"),
      rule("allow", "B.com"),
    ]);
    expect(merged.egress).toEqual([rule("deny", "b.com"), rule("allow", "c.com"), rule("allow", "a.com")]);
    expect(policy.egress).toHaveLength(2);
  });

  it("removes rules by target, ignoring unknown targets", () => {
    const policy = parsePolicy({
      defaultAction: "allow",
      egress: [rule("deny", "10.0.0.0/8"), rule("deny", "*.x.org")],
    });
    expect(removeRules(policy, ["10.9.9.9/8", "*.X.org", "nothing.test"]).egress).toEqual([]);
  });

  it("derives the mode", () => {
    expect(policyMode(parsePolicy({ defaultAction: "allow" }))).toBe("allow_all");
    expect(policyMode(parsePolicy({ defaultAction: "allow", egress: [rule("allow", "a.com")] }))).toBe(
      "allow_all",
    );
    expect(policyMode(parsePolicy({ defaultAction: "deny", egress: [rule("deny", "a.com")] }))).toBe(
      "deny_all",
    );
    expect(policyMode(parsePolicy({ defaultAction: "deny", egress: [rule("allow", "a.com")] }))).toBe(
      "enforcing",
    );
  });

  it("refuses malformed input with a status and a code", () => {
    const policy = parsePolicy({ defaultAction: "deny" });
    const failures: [() => unknown, number][] = [
      [() => parsePolicy({ defaultAction: "block" }), 400],
      [() => parsePolicy({ defaultAction: "deny", egress: {} }), 400],
      [() => parsePolicy({ defaultAction: "deny", rules: [] }), 400],
      [() => parsePolicy([]), 400],
      [() => mergeRules(policy, [rule("allow", "a.com"), { action: "allow", target: 5 }]), 400],
      [() => mergeRules(policy, [{ action: "allow", target: "a.com", extra: 1 }]), 400],
      [() => mergeRules(policy, "a.com"), 400],
      [() => removeRules(policy, []), 400],
      [() => removeRules(policy, [null]), 400],
      [
        () =>
          mergeRules(
            policy,
            Array.from({ length: MAX_RULES + 1 }, (_, i) => rule("allow", `n${i}.test`)),
          ),
        413,
      ],
    ];
    for (const [call, status] of failures) {
      expect(call).toThrow(
        expect.objectContaining({ status, code: status === 413 ? "payload_too_large" : "invalid_request" }),
      );
    }
    // Merging may not grow a policy past the limit either.
    const full = mergeRules(
      policy,
      Array.from({ length: MAX_RULES }, (_, i) => rule("allow", `n${i}.test`)),
    );
    expect(() => mergeRules(full, [rule("allow", "one.more.test")])).toThrow(
      expect.objectContaining({ status: 413 }),
    );
  });
});
