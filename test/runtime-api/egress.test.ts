import { execFile } from "node:child_process";
import { readlink } from "node:fs/promises";
import { promisify } from "node:util";
import { ConnectionConfig, Sandbox } from "@alibaba-group/opensandbox";
import { EGRESS_PORT, EGRESS_TOKEN_HEADER } from "@paddock/common";
import { bashIn, testDocker } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { egressRuntimes, getFrom, openEgressWorld, udpEchoFrom } from "../support/egress-world.js";

const run = promisify(execFile);

// A sandbox created through /v1 with a networkPolicy gets an egress sidecar that enforces it,
// under runc and under gVisor alike. The sidecar's own behaviour is covered in depth in
// packages/egress; this suite proves the runtime wires it in (its upstream, its token behind
// endpoint resolution, its removal with the sandbox), that the policy changes live through the
// published OpenSandbox SDK, and that the sandbox's root finds no way around it.

describe.each(egressRuntimes)("sandboxes with a network policy ($name)", ({ secureRuntime }) => {
  let t: TestServer;
  let world: Awaited<ReturnType<typeof openEgressWorld>>;
  let sandbox: Sandbox;
  let id: string;
  let policyUrl: string;
  let token: Record<string, string>;

  beforeAll(async () => {
    world = await openEgressWorld();
    t = await startTestServer({
      config: { secure_runtime: secureRuntime, egress: { upstream_dns: world.dns } },
      controlPlane: false,
    });
    sandbox = await Sandbox.create({
      connectionConfig: new ConnectionConfig({ domain: t.url, apiKey: t.apiKey, requestTimeoutSeconds: 60 }),
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
      timeoutSeconds: 600,
      networkPolicy: {
        defaultAction: "deny",
        egress: [
          { action: "allow", target: "allowed.test" },
          { action: "allow", target: "*.wild.test" },
        ],
      },
    });
    id = sandbox.id;
    const resolved = await t.api(`/v1/sandboxes/${id}/endpoints/${EGRESS_PORT}`);
    const endpoint = (await resolved.json()) as { endpoint: string; headers: Record<string, string> };
    policyUrl = `http://${endpoint.endpoint}/policy`;
    token = endpoint.headers;
  });

  afterAll(async () => {
    await t?.dispose();
    await world?.close();
  });

  test("the sandbox runs under the runtime named", async () => {
    const inspected = await testDocker.getContainer(id).inspect();
    expect(inspected.HostConfig.Runtime).toBe(secureRuntime.type === "gvisor" ? "runsc" : "runc");
  });

  test("allowed names resolve through the sidecar's upstream and connect", async () => {
    expect(await getFrom(id, "allowed.test")).toContain(`hello from ${world.allowed}`);
    expect(await getFrom(id, "api.wild.test")).toContain(`hello from ${world.allowed}`);
  });

  test("denied names do not resolve and denied addresses do not connect, over TCP, UDP or IPv6", async () => {
    expect((await bashIn(id, "getent hosts denied.test")).exitCode).not.toBe(0);
    const direct = await getFrom(id, world.denied);
    expect(direct).toContain("failed");
    expect(direct).not.toContain("hello");
    // The same IPv4 address written as an IPv6 one, through an AF_INET6 socket.
    const mapped = await getFrom(id, `::ffff:${world.denied}`);
    expect(mapped).toContain("failed");
    expect(mapped).not.toContain("hello");
    // UDP reaches an address an allowed name resolved to, and no other.
    expect((await bashIn(id, "getent hosts allowed.test")).exitCode).toBe(0);
    expect(await udpEchoFrom(id, world.allowed)).toContain("udp-ping");
    expect(await udpEchoFrom(id, world.denied)).not.toContain("udp-ping");
    // No IPv6 route out at all.
    expect((await bashIn(id, "ip -6 route show default")).output.trim()).toBe("");
  });

  test("DNS sent to another resolver, over UDP or TCP, is answered by the sidecar all the same", async () => {
    // The sandbox writes its own resolv.conf: a resolver that does not exist, the upstream itself,
    // Docker's embedded resolver.
    for (const nameserver of [world.denied, world.dns, "127.0.0.11"]) {
      for (const options of ["", "options use-vc"]) {
        const script = `cp /etc/resolv.conf /tmp/resolv.saved
          printf 'nameserver ${nameserver}\\n${options}\\n' > /etc/resolv.conf
          timeout 10 getent hosts allowed.test; echo "allowed=$?"
          timeout 10 getent hosts denied.test; echo "denied=$?"
          cat /tmp/resolv.saved > /etc/resolv.conf`;
        const output = (await bashIn(id, script)).output;
        expect(output, `${nameserver} ${options}`).toContain(`${world.allowed}`);
        expect(output, `${nameserver} ${options}`).toContain("allowed=0");
        expect(output, `${nameserver} ${options}`).not.toContain("denied=0");
        expect(output, `${nameserver} ${options}`).not.toContain(world.denied);
      }
    }
  });

  test("root in a new user or network namespace finds no way out, nor raw or packet sockets", async () => {
    const http = `exec 3<>/dev/tcp/${world.denied}/80 && printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3 && cat <&3`;
    for (const flags of ["-Ur", "-Urn", "-n"]) {
      const attempt = await bashIn(id, `timeout 10 unshare ${flags} bash -c '${http}' 2>&1; echo "exit=$?"`);
      expect(attempt.output, flags).not.toContain("hello");
      expect(attempt.output, flags).not.toContain("exit=0");
    }
    // A packet socket would send frames past the IP hooks the rules sit in.
    const sockets = `perl -MSocket -e 'print socket(R, PF_INET, SOCK_RAW, 255) ? "raw open\\n" : "raw: $!\\n";
      print socket(P, 17, SOCK_RAW, 0x0300) ? "packet open\\n" : "packet: $!\\n"'`;
    for (const prefix of ["", "unshare -Ur"]) {
      const attempt = await bashIn(id, `${prefix} ${sockets} 2>&1`);
      expect(attempt.output, prefix).toMatch(/raw: .+\npacket: .+/);
      // Nor may it change the namespace's routes or addresses (seen from the host).
      await bashIn(
        id,
        `${prefix} ip route add 10.99.0.0/16 dev eth0; ${prefix} ip addr add 10.98.0.1/24 dev eth0; ${prefix} ip route del default`,
      );
    }
    const pid = (await testDocker.getContainer(id).inspect()).State.Pid;
    const routes = await run("nsenter", [`--net=/proc/${pid}/ns/net`, "ip", "route"]);
    const addresses = await run("nsenter", [`--net=/proc/${pid}/ns/net`, "ip", "addr"]);
    expect(routes.stdout).toContain("default via");
    expect(routes.stdout + addresses.stdout).not.toMatch(/10\.99\.|10\.98\./);
  });

  test("the rules are made on the host kernel, in the namespace the sandbox's sockets live in", async () => {
    const sidecar = await testDocker.getContainer(`${id}-egress`).inspect();
    expect(sidecar.HostConfig.Runtime).toBe("runc");
    const sandboxPid = (await testDocker.getContainer(id).inspect()).State.Pid;
    const namespace = await readlink(`/proc/${sandboxPid}/ns/net`);
    expect(await readlink(`/proc/${sidecar.State.Pid}/ns/net`)).toBe(namespace);
    // The sandbox sees no sidecar process, holds no NET_ADMIN, and has not its token.
    const inside = await bashIn(
      id,
      "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; echo; grep CapEff /proc/self/status; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'",
    );
    expect(inside.output).not.toContain("egress");
    const tokenValue = Object.values(token)[0] ?? "";
    expect(tokenValue.length).toBeGreaterThan(16);
    expect(inside.output).not.toContain(tokenValue);
    const effective = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(inside.output)?.[1]}`);
    expect(effective & (1n << 12n)).toBe(0n);
  });

  test("the sidecar's API refuses the sandbox, which has no token", async () => {
    const body = JSON.stringify([{ action: "allow", target: "denied.test" }]);
    const request = `PATCH /policy HTTP/1.0\\r\\nContent-Type: application/json\\r\\nContent-Length: ${body.length}\\r\\n\\r\\n${body}`;
    const answer = await bashIn(
      id,
      `exec 3<>/dev/tcp/127.0.0.1/${EGRESS_PORT} && printf '${request}' >&3 && timeout 5 head -n 1 <&3`,
    );
    expect(answer.output).toMatch(/^HTTP\/1\.1 401/);
    expect((await bashIn(id, "getent hosts denied.test")).exitCode).not.toBe(0);
  });

  test("the endpoint for the egress port comes with the sidecar's token, which the API requires", async () => {
    expect(Object.keys(token)).toEqual([EGRESS_TOKEN_HEADER]);
    expect((await fetch(policyUrl)).status).toBe(401);
    const policy = (await (await fetch(policyUrl, { headers: token })).json()) as Record<string, unknown>;
    expect(policy).toMatchObject({ mode: "enforcing", policy: { defaultAction: "deny" } });
  });

  test("rules patched and deleted through the OpenSandbox SDK are in force on the next connection", async () => {
    await sandbox.patchEgressRules([{ action: "allow", target: "denied.test" }]);
    expect(await getFrom(id, "denied.test")).toContain(`hello from ${world.denied}`);
    expect(await udpEchoFrom(id, world.denied)).toContain("udp-ping");
    expect((await sandbox.getEgressPolicy()).egress?.map((rule) => rule.target)).toEqual([
      "denied.test",
      "allowed.test",
      "*.wild.test",
    ]);
    await sandbox.deleteEgressRules(["denied.test"]);
    expect((await bashIn(id, "getent hosts denied.test")).exitCode).not.toBe(0);
    const direct = await getFrom(id, world.denied);
    expect(direct).toContain("failed");
    expect(direct).not.toContain("hello");
  });

  test("the policy holds across a pause and a resume", async () => {
    await sandbox.pause();
    await expect.poll(async () => (await sandbox.getInfo()).status.state, { timeout: 30_000 }).toBe("Paused");
    const resumed = await sandbox.resume({ readyTimeoutSeconds: 60 });
    expect(await getFrom(id, "allowed.test")).toContain(`hello from ${world.allowed}`);
    const direct = await getFrom(id, world.denied);
    expect(direct).toContain("failed");
    expect(direct).not.toContain("hello");
    expect((await resumed.getEgressPolicy()).egress).toHaveLength(2);
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

  test("the sidecar goes with the sandbox", async () => {
    expect((await t.api(`/v1/sandboxes/${id}`, { method: "DELETE" })).status).toBe(204);
    const sidecar = testDocker.getContainer(`${id}-egress`);
    await expect.poll(async () => (await sidecar.inspect().catch(() => undefined)) === undefined).toBe(true);
  });
});
