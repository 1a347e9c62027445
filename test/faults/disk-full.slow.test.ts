import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { settles } from "./checks.js";
import { FaultServer } from "./fault-server.js";

// Fault 4 (docs/reliability.md): the data directory's filesystem (SQLite, disk images, template
// files) full. Calls that need to write there fail with a clear error and change nothing; the
// server stays up and works again once space returns, without a restart.

const password = "correct horse battery";

/** Fills the filesystem at `dir` to its last byte with one file; returns the file. */
function fill(dir: string): string {
  const file = join(dir, "filler");
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(1 << 20, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  }
  // What is left, less than a chunk, to the byte.
  const byte = Buffer.alloc(1, 1);
  try {
    for (;;) writeSync(fd, byte);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
  return file;
}

describe("the data directory's disk full", () => {
  let server: FaultServer;
  const connection = () => server.connection();

  beforeAll(async () => {
    server = await FaultServer.start({
      name: "disk",
      email: "disk@example.com",
      tmpfsSize: "96m",
      config: ["[usage]", "checkpoint_interval_seconds = 0.5"],
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  test("creates, uploads, snapshots and sign-ups fail clearly while it is full, and work again after", async () => {
    const before = await Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 600 });
    const e2bKey = await fetch(`${server.running?.url}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "e2b", format: "e2b" }),
    });
    const { secret: e2bSecret } = (await e2bKey.json()) as { secret: string };
    const filler = fill(server.dir);

    const refusals: Array<{ what: string; status: number; code: string }> = [];
    const refused = async (what: string, call: Promise<unknown>) => {
      const error = (await call.then(
        () => undefined,
        (caught: unknown) => caught,
      )) as { status?: number; code?: string } | undefined;
      refusals.push({ what, status: error?.status ?? 0, code: error?.code ?? "none" });
    };
    await refused("create", Sandbox.create({ ...connection(), template: "python" }));
    await refused("upload", before.files.write("/tmp/big", "y".repeat(8 * 2 ** 20)));
    await refused("pause", before.pause());
    await refused(
      "signup",
      Paddock.signup("second@example.com", password, { baseUrl: server.running?.url ?? "" }),
    );
    // The runtime API counts no rate: these reach the disk images, the engine and the records.
    const runtimeApi = async (what: string, path: string, body: unknown) => {
      const answer = await fetch(`${server.running?.url}/v1${path}`, {
        method: "POST",
        headers: { "runtime-api-key": server.apiKey, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const { code } = (await answer.json()) as { code?: string };
      refusals.push({ what, status: answer.status, code: code ?? "none" });
    };
    await runtimeApi("runtime-api create", "/sandboxes", {
      image: { uri: "paddock/base:bookworm" },
      entrypoint: ["sleep", "infinity"],
    });
    await runtimeApi("runtime-api snapshot", `/sandboxes/${before.id}/snapshots`, {});
    // E2B's surface answers in its own shape, `{code: <status>, message}`.
    const e2bCreate = await fetch(`${server.running?.url}/e2b/sandboxes`, {
      method: "POST",
      headers: { "x-api-key": e2bSecret, "content-type": "application/json" },
      body: JSON.stringify({ templateID: "python" }),
    });
    expect({ status: e2bCreate.status, body: await e2bCreate.json() }).toMatchObject({
      status: 507,
      body: { code: 507, message: expect.stringMatching(/disk is full/) },
    });
    // Calls counted against a rate limit write their count first (decision 0203).
    await refused("command", before.commands.run("echo still"));
    console.log(`disk full: ${JSON.stringify(refusals)}`);
    for (const refusal of refusals)
      expect(refusal, refusal.what).toMatchObject({ status: 507, code: "storage_full" });

    // Still up and reading while full; nothing was half made.
    expect((await before.refresh()).state).toBe("Running");
    expect((await Sandbox.list(connection())).items.map((item) => item.id)).toEqual([before.id]);
    await settles(server.db, server.instance, [before.id]);

    rmSync(filler);
    expect((await before.commands.run("echo again")).stdout).toBe("again\n");
    const after = await Sandbox.create({ ...connection(), template: "python", timeoutSeconds: 600 });
    expect((await after.commands.run("echo after")).stdout).toBe("after\n");
    await after.files.write("/tmp/big", "y".repeat(8 * 2 ** 20));
    expect((await after.commands.run("wc -c < /tmp/big")).stdout.trim()).toBe(String(8 * 2 ** 20));
    await Paddock.signup("second@example.com", password, { baseUrl: server.running?.url ?? "" });
    await settles(server.db, server.instance, [before.id, after.id]);
    await before.kill();
    await after.kill();
    await settles(server.db, server.instance, [before.id, after.id]);
  }, 300_000);
});
