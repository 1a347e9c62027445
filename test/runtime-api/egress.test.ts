import { EGRESS_PORT, EGRESS_TOKEN_HEADER } from "@paddock/common";
import { bashIn } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getFrom, openEgressWorld } from "../support/egress-world.js";

// A sandbox created through the /v1 API with a networkPolicy gets an egress sidecar that
// enforces it. The sidecar's own behaviour is covered in depth in packages/egress; this suite
// proves the runtime wires it in: the sidecar's upstream, its token behind endpoint resolution,
// and its removal with the sandbox. Under runc: gVisor has no NAT table (the create is refused).

describe("sandboxes with a network policy (runc)", () => {
  let t: TestServer;
  let world: Awaited<ReturnType<typeof openEgressWorld>>;
  let id: string;
  let policyUrl: string;
  let token: Record<string, string>;

  beforeAll(async () => {
    world = await openEgressWorld();
    t = await startTestServer({
      config: { secure_runtime: { type: "" }, egress: { upstream_dns: world.dns } },
      controlPlane: false,
    });
    const created = await t.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({
        image: { uri: "paddock/base:bookworm" },
        entrypoint: ["sleep", "infinity"],
        timeout: 600,
        networkPolicy: {
          defaultAction: "deny",
          egress: [
            { action: "allow", target: "allowed.test" },
            { action: "allow", target: "*.wild.test" },
          ],
        },
      }),
    });
    expect(created.status).toBe(202);
    id = ((await created.json()) as { id: string }).id;
    const resolved = await t.api(`/v1/sandboxes/${id}/endpoints/${EGRESS_PORT}`);
    const endpoint = (await resolved.json()) as { endpoint: string; headers: Record<string, string> };
    policyUrl = `http://${endpoint.endpoint}/policy`;
    token = endpoint.headers;
  });

  afterAll(async () => {
    await t?.dispose();
    await world?.close();
  });

  test("allowed names resolve through the sidecar's upstream and connect", async () => {
    expect(await getFrom(id, "allowed.test")).toContain(`hello from ${world.allowed}`);
    expect(await getFrom(id, "api.wild.test")).toContain(`hello from ${world.allowed}`);
  });

  test("denied names do not resolve and denied addresses do not connect", async () => {
    expect((await bashIn(id, "getent hosts denied.test")).exitCode).not.toBe(0);
    const direct = await getFrom(id, world.denied);
    expect(direct).toContain("failed");
    expect(direct).not.toContain("hello");
  });

  test("the endpoint for the egress port comes with the sidecar's token, which the API requires", async () => {
    expect(Object.keys(token)).toEqual([EGRESS_TOKEN_HEADER]);
    expect((await fetch(policyUrl)).status).toBe(401);
    const policy = (await (await fetch(policyUrl, { headers: token })).json()) as Record<string, unknown>;
    expect(policy).toMatchObject({ mode: "enforcing", policy: { defaultAction: "deny" } });
  });

  test("a PATCH through that endpoint is in force on the next connection", async () => {
    const patched = await fetch(policyUrl, {
      method: "PATCH",
      headers: { ...token, "content-type": "application/json" },
      body: JSON.stringify([{ action: "allow", target: "denied.test" }]),
    });
    expect(patched.status).toBe(200);
    expect(await getFrom(id, "denied.test")).toContain(`hello from ${world.denied}`);
  });

  test("a malformed rule is refused before anything is created", async () => {
    const before = (await (await t.api("/v1/sandboxes")).json()) as { items: unknown[] };
    for (const target of ["10.0.0.0/33", "exa mple.com", "*.*.com", ""]) {
      const refused = await t.api("/v1/sandboxes", {
        method: "POST",
        body: JSON.stringify({
          image: { uri: "paddock/base:bookworm" },
          entrypoint: ["sleep", "infinity"],
          networkPolicy: { defaultAction: "deny", egress: [{ action: "allow", target }] },
        }),
      });
      expect(refused.status, target).toBe(400);
      expect(((await refused.json()) as { code: string }).code).toBe("invalid_request");
    }
    const after = (await (await t.api("/v1/sandboxes")).json()) as { items: unknown[] };
    expect(after.items).toHaveLength(before.items.length);
  });

  test("the sandbox holds no NET_ADMIN; the sidecar goes with the sandbox", async () => {
    const status = await bashIn(id, "grep CapEff /proc/self/status");
    const effective = BigInt(`0x${status.output.trim().split(/\s+/)[1]}`);
    expect(effective & (1n << 12n)).toBe(0n);
    expect((await t.api(`/v1/sandboxes/${id}`, { method: "DELETE" })).status).toBe(204);
    const sidecar = new Docker().getContainer(`${id}-egress`);
    await expect.poll(async () => (await sidecar.inspect().catch(() => undefined)) === undefined).toBe(true);
  });
});
