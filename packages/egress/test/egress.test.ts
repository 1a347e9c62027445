import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  buildImages,
  createWorld,
  docker,
  health,
  probe,
  removeWorld,
  shell,
  startSidecar,
  type World,
  waitUntil,
} from "./world.js";

// Every test under both runtimes a sandbox may have: runc, and gVisor with host-kernel sockets
// (runsc --network=host), whose sockets the sidecar's rules reach as they reach runc's.
const initial = {
  defaultAction: "deny",
  egress: [
    { action: "allow", target: "allowed.test" },
    { action: "allow", target: "*.wild.test" },
  ],
};

/** Changes must reach new connections within a second; polled so a slow machine shows its real time. */
async function within(seconds: number, check: () => Promise<boolean>): Promise<void> {
  await waitUntil(check, seconds * 1000);
}

describe.each(["runc", "runsc"] as const)("egress sidecar beside a sandbox under %s", (runtime) => {
  let world: World;

  beforeAll(async () => {
    await buildImages();
    world = await createWorld(runtime);
    await startSidecar(world, initial);
  });

  afterAll(async () => {
    if (world) await removeWorld(world);
  });

  it("reports the initial policy and its mode", async () => {
    const { status, body } = await api(world, "GET");
    expect(status).toBe(200);
    expect(body).toEqual({ status: "ok", mode: "enforcing", enforcementMode: "dns+nft", policy: initial });
  });

  it("lets allowed names through and refuses denied names and addresses", async () => {
    expect((await probe.get(world, "http://allowed.test/")).output).toContain("hello-one");
    expect(await probe.status(world, "denied.test")).toBe("NXDOMAIN");
    // Over TCP too (the proxy asks the upstream over UDP with room for any answer).
    expect(await probe.status(world, "allowed.test", "+tcp")).toBe("NOERROR");
    expect(await probe.status(world, "denied.test", "+tcp")).toBe("NXDOMAIN");
    // Dialled directly, the denied server's address is refused in the kernel.
    const direct = await probe.get(world, `http://${world.http2}/`);
    expect(direct.code).not.toBe(0);
    expect(direct.output).not.toContain("hello-two");
  });

  it("matches a wildcard on subdomains but not on the apex", async () => {
    expect((await probe.get(world, "http://api.wild.test/")).output).toContain("hello-one");
    expect(await probe.status(world, "wild.test")).toBe("NXDOMAIN");
  });

  it("blocks DNS to other servers unless an address rule allows them", async () => {
    // Port 53 anywhere lands on the proxy, which applies the policy.
    expect(await probe.status(world, "denied.test", `@${world.dns}`)).toBe("NXDOMAIN");
    // Any other port (DoT, DoH, a resolver on 5353) is just another denied destination.
    expect(await probe.status(world, "denied.test", `-p 5353 @${world.dns}`)).toBe("no answer");
    const patched = await api(world, "PATCH", [{ action: "allow", target: `${world.dns}/32` }]);
    expect(patched.status).toBe(200);
    expect(patched.body.policy.egress[0]).toEqual({ action: "allow", target: world.dns });
    await within(
      1,
      async () => (await probe.status(world, "denied.test", `-p 5353 @${world.dns}`)) === "NOERROR",
    );
    expect((await api(world, "DELETE", [world.dns])).status).toBe(200);
    await within(
      1,
      async () => (await probe.status(world, "denied.test", `-p 5353 @${world.dns}`)) === "no answer",
    );
  });

  it("gives no process in the sandbox the sidecar's own way to the upstream resolver", async () => {
    // The sidecar's socket to the upstream: remote <dns>:53 in the namespace's /proc/net/udp, which
    // runc's sandbox reads as well (gVisor's shows it none; the port is taken from the sidecar).
    const remote = `${world.dns
      .split(".")
      .map((octet) => Number(octet).toString(16).padStart(2, "0").toUpperCase())
      .reverse()
      .join("")}:0035`;
    const sockets = await shell(world.sidecar, "cat /proc/net/udp");
    const line = sockets.output.split("\n").find((entry) => entry.includes(remote));
    const port = Number.parseInt(line?.trim().split(/\s+/)[1]?.split(":")[1] ?? "", 16);
    expect(port).toBeGreaterThan(0);
    // Root in the sandbox has the sidecar's uid, and any other uid redirects alike.
    expect(await probe.status(world, "denied.test", `@${world.dns}`)).toBe("NXDOMAIN");
    const otherUid = await shell(
      world.sandbox,
      `setpriv --reuid 4242 --regid 4242 --clear-groups dig +time=2 +tries=1 @${world.dns} denied.test`,
    );
    expect(otherUid.output).toContain("status: NXDOMAIN");
    // The one exempt source port cannot be taken, and nothing local may send to it.
    const squat = await shell(
      world.sandbox,
      `dig +time=2 +tries=1 -b 0.0.0.0#${port} @${world.dns} denied.test`,
    );
    expect(squat.output).not.toContain("status:");
    expect(squat.output).toMatch(/address in use/i);
    const forged = await shell(world.sandbox, `dig +time=2 +tries=1 -p ${port} @127.0.0.1 allowed.test`);
    // Refused by the ruleset (ICMP admin-prohibited), not by the socket (which would be "connection refused").
    expect(forged.output).toMatch(/host unreachable/i);
    expect((await probe.get(world, "http://allowed.test/")).output).toContain("hello-one");
  });

  it("applies PATCH and DELETE to new connections within a second", async () => {
    const patched = await api(world, "PATCH", [{ action: "allow", target: "denied.test" }]);
    expect(patched.status).toBe(200);
    expect(patched.body.policy.egress).toContainEqual({ action: "allow", target: "denied.test" });
    await within(1, async () => (await probe.get(world, "http://denied.test/")).output.includes("hello-two"));

    // A deny rule ahead of the wildcard wins for its name only.
    expect((await api(world, "PATCH", [{ action: "deny", target: "api.wild.test" }])).status).toBe(200);
    await within(1, async () => (await probe.status(world, "api.wild.test")) === "NXDOMAIN");
    expect(await probe.status(world, "www.wild.test")).toBe("NOERROR");

    const removed = await api(world, "DELETE", ["denied.test", "api.wild.test", "never.listed.test"]);
    expect(removed.status).toBe(200);
    expect(removed.body.policy).toEqual(initial);
    await within(1, async () => (await probe.status(world, "denied.test")) === "NXDOMAIN");
    expect(await probe.status(world, "api.wild.test")).toBe("NOERROR");
  });

  it("replaces the whole policy with PUT, default action included", async () => {
    const opened = await api(world, "PUT", {
      defaultAction: "allow",
      egress: [{ action: "deny", target: "allowed.test" }],
    });
    expect(opened.status).toBe(200);
    expect(opened.body.policy).toEqual({
      defaultAction: "allow",
      egress: [{ action: "deny", target: "allowed.test" }],
    });
    await within(1, async () =>
      (await probe.get(world, `http://${world.http2}/`)).output.includes("hello-two"),
    );
    expect(await probe.status(world, "allowed.test")).toBe("NXDOMAIN");

    // A bad policy changes nothing.
    const bad = await api(world, "PUT", { defaultAction: "maybe" });
    expect(bad.status).toBe(400);
    expect((await api(world, "GET")).body.policy.defaultAction).toBe("allow");

    expect((await api(world, "PUT", initial)).body.policy).toEqual(initial);
    await within(1, async () => (await probe.get(world, `http://${world.http2}/`)).code !== 0);
    expect((await probe.get(world, "http://allowed.test/")).output).toContain("hello-one");
  });

  it("keeps the sandbox from changing the rules or the policy", async () => {
    const flush = await shell(world.sandbox, "nft flush ruleset");
    expect(flush.code).not.toBe(0);
    // runc: no NET_ADMIN; gVisor: its kernel has no nftables, and the host's is out of reach.
    expect(flush.output).toMatch(runtime === "runc" ? /Operation not permitted/ : /Protocol not supported/);
    const fromInside = await shell(
      world.sandbox,
      `curl -s -o /dev/null -w '%{http_code}' -X PATCH -H 'content-type: application/json' -d '[{"action":"allow","target":"denied.test"}]' http://127.0.0.1:18080/policy`,
    );
    expect(fromInside.output).toBe("401");
    expect((await api(world, "GET", undefined, null)).status).toBe(401);
    const wrong = await api(world, "PATCH", [{ action: "allow", target: "denied.test" }], `${world.token}x`);
    expect(wrong).toEqual({ status: 401, body: { code: "unauthorized", message: expect.any(String) } });
    expect((await api(world, "GET")).body.policy).toEqual(initial);
  });

  it("answers bad input with 400 or 413 and leaves the policy as it was", async () => {
    const cases: [unknown, number, string][] = [
      [[{ action: "allow", target: "10.0.0.0/33" }], 400, "invalid_request"],
      [[{ action: "allow", target: "300.1.2.3" }], 400, "invalid_request"],
      [[{ action: "permit", target: "example.com" }], 400, "invalid_request"],
      [[{ action: "allow", target: "bad..name" }], 400, "invalid_request"],
      [[{ action: "allow", target: "*.*.example.com" }], 400, "invalid_request"],
      [[{ action: "allow", target: "example.com", port: 443 }], 400, "invalid_request"],
      [[{ action: "allow" }], 400, "invalid_request"],
      [[], 400, "invalid_request"],
      [{ defaultAction: "allow" }, 400, "invalid_request"],
      ["{not json", 400, "invalid_json"],
      [
        Array.from({ length: 1001 }, (_, index) => ({ action: "allow", target: `n${index}.test` })),
        413,
        "payload_too_large",
      ],
      [`[${"1,".repeat(400_000)}1]`, 413, "payload_too_large"],
    ];
    for (const [body, status, code] of cases) {
      const answer = await api(world, "PATCH", body);
      expect({
        body: JSON.stringify(body).slice(0, 60),
        status: answer.status,
        code: answer.body?.code,
      }).toEqual({
        body: JSON.stringify(body).slice(0, 60),
        status,
        code,
      });
    }
    // One bad rule among good ones changes nothing.
    const mixed = await api(world, "PATCH", [
      { action: "allow", target: "denied.test" },
      { action: "allow", target: "1.2.3.4/99" },
    ]);
    expect(mixed.status).toBe(400);
    expect((await api(world, "DELETE", ["ok.test", 42])).status).toBe(400);
    expect((await api(world, "DELETE", "denied.test")).status).toBe(400);
    expect((await api(world, "GET")).body.policy).toEqual(initial);
    expect(await probe.status(world, "denied.test")).toBe("NXDOMAIN");
  });

  it("blocks everything once no rule allows anything", async () => {
    const removed = await api(world, "DELETE", ["allowed.test", "*.wild.test"]);
    expect(removed.body).toMatchObject({ mode: "deny_all", policy: { defaultAction: "deny", egress: [] } });
    await within(1, async () => (await probe.status(world, "allowed.test")) === "NXDOMAIN");
    // Addresses learned from names allowed earlier are withdrawn too.
    expect((await probe.get(world, `http://${world.http1}/`)).code).not.toBe(0);
    expect((await probe.get(world, `http://${world.http2}/`)).code).not.toBe(0);
    expect(await probe.status(world, "denied.test", `-p 5353 @${world.dns}`)).toBe("no answer");
    expect((await api(world, "PATCH", initial.egress)).status).toBe(200);
  });

  it("stays closed while the sidecar is dead and comes back with the policy it had", async () => {
    // A change the environment's initial policy does not have.
    expect((await api(world, "PATCH", [{ action: "deny", target: "api.wild.test" }])).status).toBe(200);
    const policy = (await api(world, "GET")).body.policy;
    expect(policy).not.toEqual(initial);

    // Dead, with no one to restart it: the rules stay in the kernel.
    await docker("update", "--restart", "no", world.sidecar);
    const pid = Number(await docker("inspect", "-f", "{{.State.Pid}}", world.sidecar));
    process.kill(pid, "SIGKILL");
    await waitUntil(
      async () => (await docker("inspect", "-f", "{{.State.Running}}", world.sidecar)) === "false",
      10_000,
    );
    expect(await health(world)).toBe(0);
    expect((await probe.get(world, `http://${world.http2}/`)).code).not.toBe(0);
    expect(await probe.status(world, "denied.test")).toBe("no answer");
    expect(await probe.status(world, "denied.test", `-p 5353 @${world.dns}`)).toBe("no answer");

    // Started again, it re-installs the policy it saved, not the initial one from its environment.
    await docker("update", "--restart", "always", world.sidecar);
    await docker("start", world.sidecar);
    await waitUntil(async () => (await health(world)) === 200, 30_000);
    expect((await api(world, "GET")).body.policy).toEqual(policy);

    // Killed under its restart policy, Docker brings it back by itself.
    const restarts = Number(await docker("inspect", "-f", "{{.RestartCount}}", world.sidecar));
    process.kill(Number(await docker("inspect", "-f", "{{.State.Pid}}", world.sidecar)), "SIGKILL");
    await waitUntil(
      async () => Number(await docker("inspect", "-f", "{{.RestartCount}}", world.sidecar)) > restarts,
      30_000,
    );
    await waitUntil(async () => (await health(world)) === 200, 30_000);
    expect((await api(world, "GET")).body.policy).toEqual(policy);
    expect((await probe.get(world, "http://allowed.test/")).output).toContain("hello-one");
    expect(await probe.status(world, "denied.test")).toBe("NXDOMAIN");
    expect(await probe.status(world, "api.wild.test")).toBe("NXDOMAIN");
    expect((await probe.get(world, `http://${world.http2}/`)).code).not.toBe(0);
  });
});
