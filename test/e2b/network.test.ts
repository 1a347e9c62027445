/**
 * E2B's network settings through its stock `e2b` SDK, from the npm registry and unmodified, against
 * a live Paddock server under runc and under gVisor: `allowInternetAccess: false` and
 * `network.allowOut`/`denyOut` become an egress policy the sandbox cannot get around.
 */
import { ALL_TRAFFIC, Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type E2bServer, startE2bServer } from "../support/e2b.js";
import { egressRuntimes, openEgressWorld } from "../support/egress-world.js";

/** What a plain HTTP GET from inside the sandbox sees, run through the SDK: the body, or why it failed. */
async function getFrom(sandbox: Sandbox, host: string): Promise<string> {
  const script = `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/80 && printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3 && cat <&3' 2>&1 || echo "failed: $?"`;
  return (await sandbox.commands.run(script)).stdout;
}

describe.each(egressRuntimes)("the stock e2b SDK: network settings ($name)", ({ secureRuntime }) => {
  let server: E2bServer;
  let world: Awaited<ReturnType<typeof openEgressWorld>>;

  beforeAll(async () => {
    world = await openEgressWorld();
    server = await startE2bServer({
      config: { secure_runtime: secureRuntime, egress: { upstream_dns: world.dns } },
    });
    Object.assign(process.env, server.env);
  });
  afterAll(async () => {
    await server?.dispose();
    await world?.close();
  });

  test("allowInternetAccess: false reaches nothing, by name or by address", async () => {
    const sandbox = await Sandbox.create("base", { timeoutMs: 300_000, allowInternetAccess: false });
    try {
      expect((await sandbox.getInfo()).allowInternetAccess).toBe(false);
      for (const host of ["allowed.test", world.allowed, world.denied]) {
        const seen = await getFrom(sandbox, host);
        expect(seen, host).toContain("failed");
        expect(seen, host).not.toContain("hello");
      }
    } finally {
      await sandbox.kill();
    }
  });

  test("denyOut refuses the addresses it names and nothing else", async () => {
    const sandbox = await Sandbox.create("base", {
      timeoutMs: 300_000,
      network: { denyOut: [`${world.denied}/32`] },
    });
    try {
      expect(await getFrom(sandbox, "allowed.test")).toContain(`hello from ${world.allowed}`);
      // The name still resolves (default allow), but its address is denied.
      for (const host of ["denied.test", world.denied]) {
        const seen = await getFrom(sandbox, host);
        expect(seen, host).toContain("failed");
        expect(seen, host).not.toContain("hello");
      }
    } finally {
      await sandbox.kill();
    }
  });

  test("denyOut of all traffic with allowOut lets through only the names allowed", async () => {
    const sandbox = await Sandbox.create("base", {
      timeoutMs: 300_000,
      network: { denyOut: [ALL_TRAFFIC], allowOut: ["allowed.test"] },
    });
    try {
      expect((await sandbox.getInfo()).allowInternetAccess).toBe(false);
      expect(await getFrom(sandbox, "allowed.test")).toContain(`hello from ${world.allowed}`);
      for (const host of ["denied.test", world.denied]) {
        const seen = await getFrom(sandbox, host);
        expect(seen, host).toContain("failed");
        expect(seen, host).not.toContain("hello");
      }
    } finally {
      await sandbox.kill();
    }
  });

  test("updateNetwork replaces the settings live; without settings at create it is refused", async () => {
    const sandbox = await Sandbox.create("base", { timeoutMs: 300_000, allowInternetAccess: false });
    try {
      expect(await getFrom(sandbox, "allowed.test")).toContain("failed");
      await sandbox.updateNetwork({ allowOut: ["allowed.test"], denyOut: [ALL_TRAFFIC] });
      expect(await getFrom(sandbox, "allowed.test")).toContain(`hello from ${world.allowed}`);
      expect(await getFrom(sandbox, world.denied)).toContain("failed");
      // Omitted fields clear: nothing listed opens everything.
      await sandbox.updateNetwork({});
      expect(await getFrom(sandbox, world.denied)).toContain(`hello from ${world.denied}`);
      await sandbox.updateNetwork({ allowInternetAccess: false });
      expect(await getFrom(sandbox, "allowed.test")).toContain("failed");
      // What Paddock cannot hold is refused, and the settings stay as they were.
      await expect(sandbox.updateNetwork({ egressProxy: { address: "127.0.0.1:3128" } })).rejects.toThrow(
        /not available/,
      );
      expect(await getFrom(sandbox, "allowed.test")).toContain("failed");
    } finally {
      await sandbox.kill();
    }
    const open = await Sandbox.create("base", { timeoutMs: 300_000 });
    try {
      await expect(open.updateNetwork({ allowInternetAccess: false })).rejects.toThrow(
        /created without network settings/,
      );
      expect(await getFrom(open, world.denied)).toContain(`hello from ${world.denied}`);
    } finally {
      await open.kill();
    }
  });
});
