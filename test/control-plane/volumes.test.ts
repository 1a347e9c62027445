import { startTestServer, type TestServer } from "@paddock/server/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

type Json = any;

/** Volumes on the control plane (decision 0192), against a live server on real Docker. */
describe.each(["gvisor", "runc"] as const)("volumes on the control plane, under %s", (secure) => {
  let t: TestServer;
  let owner: string;
  let stranger: string;
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await fetch(`${t.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };
  const run = async (token: string, id: string, command: string) =>
    (await call("POST", `/sandboxes/${id}/run`, token, { command })).body as {
      stdout: string;
      stderr: string;
      exitCode: number;
    };
  const sandboxWith = async (token: string, volumes: unknown[]) => {
    const created = await call("POST", "/sandboxes", token, { template: "python", volumes });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  beforeAll(async () => {
    t = await startTestServer({
      config: {
        ...(secure === "runc" ? { secure_runtime: { type: "" } } : {}),
        plans: { free_max_volumes: 3, free_max_disk: "2Gi" },
        docker: { default_disk: "64Mi" },
      },
    });
    owner = await t.account("volume-owner@example.com");
    stranger = await t.account("volume-stranger@example.com");
  });
  afterAll(async () => {
    await t?.dispose();
  });

  test("create, share between sandboxes, outlive them, refuse deletion while mounted, then delete", async () => {
    const created = await call("POST", "/volumes", owner, { name: "shared", size: "32Mi" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "shared", sizeBytes: 32 * 2 ** 20 });
    const id = created.body.id as string;
    expect((await call("GET", "/volumes", owner)).body.items.map((volume: Json) => volume.id)).toEqual([id]);
    expect((await call("GET", `/volumes/${id}`, owner)).body.name).toBe("shared");

    const writer = await sandboxWith(owner, [{ volume: "shared", mountPath: "/data" }]);
    const reader = await sandboxWith(owner, [{ volume: "shared", mountPath: "/mnt/shared", readOnly: true }]);
    expect((await run(owner, writer, "echo hello > /data/hello.txt && cat /data/hello.txt")).stdout).toBe(
      "hello\n",
    );
    expect((await run(owner, reader, "cat /mnt/shared/hello.txt")).stdout).toBe("hello\n");
    expect((await run(owner, reader, "touch /mnt/shared/nope")).exitCode).not.toBe(0);
    const fill = await run(owner, writer, "dd if=/dev/zero of=/data/fill bs=1M count=64 2>&1; echo rc=$?");
    expect(fill.stdout).toContain("No space left on device");
    expect((await run(owner, writer, "rm /data/fill; echo alive")).stdout).toBe("alive\n");

    const refused = await call("DELETE", `/volumes/${id}`, owner);
    expect([refused.status, refused.body.code]).toEqual([409, "volume_in_use"]);
    expect(refused.body.detail).toContain(writer);
    expect(refused.body.detail).toContain(reader);

    expect((await call("DELETE", `/sandboxes/${writer}`, owner)).status).toBe(204);
    expect((await call("DELETE", `/sandboxes/${reader}`, owner)).status).toBe(204);
    const later = await sandboxWith(owner, [{ volume: "shared", mountPath: "/data" }]);
    expect((await run(owner, later, "cat /data/hello.txt")).stdout).toBe("hello\n");
    expect((await call("DELETE", `/sandboxes/${later}`, owner)).status).toBe(204);

    expect((await call("DELETE", `/volumes/${id}`, owner)).status).toBe(204);
    expect((await call("GET", `/volumes/${id}`, owner)).body.code).toBe("volume_not_found");
  });

  test("another account's volume is 404, by id and by name", async () => {
    const id = (await call("POST", "/volumes", owner, { name: "private", size: "16Mi" })).body.id as string;
    for (const [method, path] of [
      ["GET", `/volumes/${id}`],
      ["DELETE", `/volumes/${id}`],
    ] as const) {
      const answer = await call(method, path, stranger);
      expect([answer.status, answer.body.code], `${method} ${path}`).toEqual([404, "volume_not_found"]);
    }
    expect((await call("GET", "/volumes", stranger)).body.items).toEqual([]);
    const byName = await call("POST", "/sandboxes", stranger, {
      template: "python",
      volumes: [{ volume: "private", mountPath: "/data" }],
    });
    expect([byName.status, byName.body.code]).toEqual([404, "volume_not_found"]);
    expect((await call("GET", "/sandboxes", stranger)).body.items).toEqual([]);
    expect((await call("GET", `/volumes/${id}`, owner)).status).toBe(200);
    expect((await call("DELETE", `/volumes/${id}`, owner)).status).toBe(204);
  });

  test("bad names, sizes and mounts are 400s with stable codes; a name is taken once", async () => {
    for (const name of ["", "with space", "slash/ed", "x".repeat(64), "ünï"]) {
      const answer = await call("POST", "/volumes", owner, { name });
      expect([answer.status, answer.body.code], name).toEqual([400, "invalid_volume_name"]);
    }
    for (const size of ["1", "10Mi", "big", "1Ti"]) {
      const answer = await call("POST", "/volumes", owner, { name: "sized", size });
      expect([answer.status, answer.body.code], size).toEqual([400, "invalid_volume_size"]);
    }
    const unknownField = await call("POST", "/volumes", owner, { name: "x", bytes: 5 });
    expect([unknownField.status, unknownField.body.code]).toEqual([400, "invalid_request"]);

    const racers = await Promise.all(
      Array.from({ length: 4 }, () => call("POST", "/volumes", owner, { name: "race", size: "16Mi" })),
    );
    expect(racers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409]);
    for (const answer of racers.filter((answer) => answer.status === 409))
      expect(answer.body.code).toBe("volume_exists");
    const race = racers.find((answer) => answer.status === 201)?.body.id as string;

    for (const mountPath of ["/", "/opt/paddock", "/opt/paddock/x", "/a/../b", "relative"]) {
      const answer = await call("POST", "/sandboxes", owner, {
        template: "python",
        volumes: [{ volume: "race", mountPath }],
      });
      expect([answer.status, answer.body.code], mountPath).toEqual([400, "invalid_request"]);
    }
    const twice = await call("POST", "/sandboxes", owner, {
      template: "python",
      volumes: [
        { volume: "race", mountPath: "/a" },
        { volume: "race", mountPath: "/a" },
      ],
    });
    expect([twice.status, twice.body.code]).toEqual([400, "invalid_request"]);
    expect((await call("GET", "/sandboxes", owner)).body.items).toEqual([]);
    expect((await call("DELETE", `/volumes/${race}`, owner)).status).toBe(204);
  });

  test("the plan's volume count and disk hold volumes back", async () => {
    const big = await call("POST", "/volumes", owner, { name: "big", size: "3Gi" });
    expect([big.status, big.body.code]).toEqual([403, "quota_exceeded"]);
    const ids: string[] = [];
    for (const name of ["q1", "q2", "q3"]) {
      const answer = await call("POST", "/volumes", owner, { name, size: "16Mi" });
      expect(answer.status).toBe(201);
      ids.push(answer.body.id);
    }
    const fourth = await call("POST", "/volumes", owner, { name: "q4", size: "16Mi" });
    expect([fourth.status, fourth.body.code]).toEqual([403, "quota_exceeded"]);
    expect(fourth.body.detail).toMatch(/^volume limit/);
    for (const id of ids) expect((await call("DELETE", `/volumes/${id}`, owner)).status).toBe(204);
  });
});
