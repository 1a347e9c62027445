import { bashIn } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { ConflictError, InvalidRequestError, NotFoundError, Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { egressRuntimes, getFrom, openEgressWorld } from "../support/egress-world.js";

// The control plane's network policy, driven through the SDK, under runc and under gVisor alike.

async function apiKeyFor(t: TestServer, email: string): Promise<string> {
  await Paddock.signup(email, "correct horse battery", { baseUrl: t.url });
  const { client } = await Paddock.login(email, "correct horse battery", { baseUrl: t.url });
  return (await client.keys.create({ name: "egress" })).secret;
}

describe.each(egressRuntimes)(
  "network policy through the control plane and the SDK ($name)",
  ({ secureRuntime }) => {
    let t: TestServer;
    let world: Awaited<ReturnType<typeof openEgressWorld>>;
    let connection: { baseUrl: string; apiKey: string };
    let sandbox: Sandbox;

    beforeAll(async () => {
      world = await openEgressWorld();
      t = await startTestServer({
        config: { secure_runtime: secureRuntime, egress: { upstream_dns: world.dns } },
      });
      connection = { baseUrl: t.url, apiKey: await apiKeyFor(t, "egress@example.com") };
      sandbox = await Sandbox.create({
        ...connection,
        template: "python",
        timeoutSeconds: 600,
        networkPolicy: { defaultAction: "deny", egress: [{ action: "allow", target: "allowed.test" }] },
      });
    });

    afterAll(async () => {
      await t?.dispose();
      await world?.close();
    });

    test("the policy given at create is enforced and readable", async () => {
      expect(await getFrom(sandbox.id, "allowed.test")).toContain(`hello from ${world.allowed}`);
      expect((await bashIn(sandbox.id, "getent hosts denied.test")).exitCode).not.toBe(0);
      expect(await sandbox.networkPolicy.get()).toEqual({
        mode: "enforcing",
        policy: { defaultAction: "deny", egress: [{ action: "allow", target: "allowed.test" }] },
      });
    });

    test("update and remove change what the sandbox can reach", async () => {
      const updated = await sandbox.networkPolicy.update([{ action: "allow", target: "denied.test" }]);
      expect(updated.policy.egress.map((rule) => rule.target)).toEqual(["denied.test", "allowed.test"]);
      expect(await getFrom(sandbox.id, "denied.test")).toContain(`hello from ${world.denied}`);
      const removed = await sandbox.networkPolicy.remove(["denied.test"]);
      expect(removed.policy.egress).toEqual([{ action: "allow", target: "allowed.test" }]);
      expect((await bashIn(sandbox.id, "getent hosts denied.test")).exitCode).not.toBe(0);
    });

    test("bad rules are refused with a code, and the enforced policy stays as it was", async () => {
      const before = await sandbox.networkPolicy.get();
      // The sidecar's refusals name the field where the caller sent it (body.egress[0], not its own body[0]).
      for (const [rule, message] of [
        [
          { action: "allow", target: "10.0.0.0/40" },
          'body.egress[0].target: "10.0.0.0/40" is not a domain, *.domain, IP address or CIDR',
        ],
        [
          { action: "allow", target: "bad name.test" },
          'body.egress[0].target: "bad name.test" is not a domain, *.domain, IP address or CIDR',
        ],
        [{ action: "maybe", target: "fine.test" }, 'body.egress[0].action: must be one of "allow", "deny"'],
      ] as const) {
        const error = await sandbox.networkPolicy.update([rule as never]).catch((caught: unknown) => caught);
        expect(error, rule.target).toBeInstanceOf(InvalidRequestError);
        expect(error, rule.target).toMatchObject({ code: "invalid_request", message });
      }
      const removal = await sandbox.networkPolicy
        .remove(["bad name.test"])
        .catch((caught: unknown) => caught);
      expect(removal).toMatchObject({
        code: "invalid_request",
        message: 'query.target[0]: "bad name.test" is not a domain, *.domain, IP address or CIDR',
      });
      await expect(sandbox.networkPolicy.update([])).rejects.toBeInstanceOf(InvalidRequestError);
      expect(await sandbox.networkPolicy.get()).toEqual(before);
    });

    test("another account cannot see or change the policy", async () => {
      const other = { baseUrl: t.url, apiKey: await apiKeyFor(t, "other@example.com") };
      const foreign = await fetch(`${t.url}/sandboxes/${sandbox.id}/network-policy`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${other.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ egress: [{ action: "allow", target: "denied.test" }] }),
      });
      expect(foreign.status).toBe(404);
      await expect(Sandbox.connect(sandbox.id, other)).rejects.toBeInstanceOf(NotFoundError);
      expect((await sandbox.networkPolicy.get()).policy.egress).toHaveLength(1);
    });

    test("a sandbox created without a policy has none to change", async () => {
      const open = await Sandbox.create({ ...connection, template: "python", timeoutSeconds: 600 });
      const error = await open.networkPolicy.get().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).code).toBe("network_policy_absent");
      await open.kill();
    });
  },
);
