import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EGRESS_TOKEN_HEADER } from "@paddock/common/contracts";
import { parsePolicy } from "@paddock/common/egress-policy";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApi } from "./api.js";
import { Enforcer } from "./enforcer.js";
import { PolicyStore } from "./policy-store.js";

/** [method, body, expected message] */
type Case = [string, unknown, string];

describe("the egress sidecar's refusals name the path and property", () => {
  const directory = mkdtempSync(join(tmpdir(), "paddock-egress-messages-"));
  // The kernel is not the subject here: rulesets are accepted without being applied.
  const enforcer = new Enforcer(
    parsePolicy({ defaultAction: "deny" }),
    new PolicyStore(join(directory, "policy.json")),
    { family: 4, address: "127.0.0.1", port: 53 },
    15353,
    async () => undefined,
  );
  const api = createApi({ enforcer, token: "secret", ready: () => true, log: () => undefined });
  let base: string;

  beforeAll(async () => {
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => api.close(resolve));
    rmSync(directory, { recursive: true, force: true });
  });

  const cases: Case[] = [
    [
      "PATCH",
      [{ action: "allow", taget: "example.com" }],
      'body[0]: missing required property "target"; did you mean "target" instead of "taget"?',
    ],
    [
      "PATCH",
      [{ action: "allow", target: "example.com", port: 443 }],
      'body[0].port: unknown property "port"',
    ],
    [
      "PATCH",
      [
        { action: "allow", target: "example.com" },
        { action: "Deny", target: "example.org" },
      ],
      'body[1].action: must be one of "allow", "deny"; did you mean "deny"?',
    ],
    ["PATCH", [{ action: "allow", target: 5 }], "body[0].target: must be string"],
    [
      "PATCH",
      [{ action: "allow", target: "exa mple.com" }],
      'body[0].target: "exa mple.com" is not a domain, *.domain, IP address or CIDR',
    ],
    ["PATCH", { egress: [] }, "body: must be a non-empty array of rules {action, target}"],
    ["DELETE", ["example.com", 7], "body[1]: 7 is not a domain, *.domain, IP address or CIDR"],
  ];

  test.each(cases)("%s %j", async (method, body, message) => {
    const response = await fetch(`${base}/policy`, {
      method,
      headers: { [EGRESS_TOKEN_HEADER]: "secret", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: { code: "invalid_request", message },
    });
  });

  test("the initial policy's refusals name its fields", () => {
    expect(() => parsePolicy({ default_action: "deny" })).toThrow(
      'policy.default_action: unknown property "default_action"; did you mean "defaultAction"?',
    );
    expect(() => parsePolicy({ egress: [{ action: "deny" }] })).toThrow(
      'policy.egress[0]: missing required property "target"',
    );
  });
});
