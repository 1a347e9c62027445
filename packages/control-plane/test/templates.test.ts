import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlaneUnderTest, startControlPlane } from "./harness.js";

/** A tar of `files` (name → content), with fixed times. */
async function archive(files: Record<string, string>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files))
    pack.entry({ name, mode: 0o644, mtime: new Date(0) }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe("account templates over the control plane", () => {
  let cp: ControlPlaneUnderTest;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    cp = await startControlPlane();
    alice = await cp.account(`alice-${Date.now()}@example.com`);
    bob = await cp.account(`bob-${Date.now()}@example.com`);
  }, 60_000);
  afterAll(async () => {
    await cp?.dispose();
  });

  const upload = (path: string, token: string, body: Buffer, type = "application/x-tar") =>
    fetch(`${cp.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": type },
      body,
    });

  it("builds from a context, streams the log live, starts sandboxes of the account only, and refuses a delete in use", async () => {
    const context = gzipSync(
      await archive({
        Dockerfile:
          "FROM ubuntu\nCOPY greeting.txt /srv/\nRUN for i in 1 2 3; do echo line $i; done\nWORKDIR /srv",
        "greeting.txt": "hello from the context",
      }),
    );
    const answer = await upload(
      "/templates/greeter/builds?description=Greets",
      alice,
      context,
      "application/gzip",
    );
    expect(answer.status, await answer.clone().text()).toBe(202);
    const { template, build } = (await answer.json()) as {
      template: { name: string };
      build: { id: string };
    };
    expect(template.name).toBe("greeter");

    // The log as server-sent events, live, ending with the build's status.
    const events = await fetch(`${cp.url}/templates/greeter/builds/${build.id}/logs`, {
      headers: { authorization: `Bearer ${alice}`, accept: "text/event-stream" },
    });
    const text = await events.text();
    expect(text).toContain("line 3");
    expect(text).toMatch(/"type":"status".*"status":"ready"/);
    // And afterwards, as JSON pages.
    const page = await cp.call("GET", `/templates/greeter/builds/${build.id}/logs?from=0&limit=2`, alice);
    expect(page.status).toBe(200);
    expect(page.body.entries).toHaveLength(2);
    expect(page.body.next).toBe(2);

    const listed = await cp.call("GET", "/sandboxes/templates", alice);
    expect(listed.body.items.map((item: { id: string }) => item.id)).toContain("greeter");
    const created = await cp.call("POST", "/sandboxes", alice, { template: "greeter", timeout: 300 });
    expect(created.status, created.text).toBe(201);
    const run = await cp.call("POST", `/sandboxes/${created.body.id}/run`, alice, {
      command: "cat greeting.txt",
    });
    expect(run.body.stdout, run.text).toBe("hello from the context");

    // Bob sees none of it: not listed, not startable, not readable, not deletable.
    const bobs = await cp.call("GET", "/sandboxes/templates", bob);
    expect(bobs.body.items.map((item: { id: string }) => item.id)).not.toContain("greeter");
    expect((await cp.call("POST", "/sandboxes", bob, { template: "greeter" })).body.code).toBe(
      "template_not_found",
    );
    for (const [method, path] of [
      ["GET", "/templates/greeter"],
      ["GET", `/templates/greeter/builds/${build.id}`],
      ["GET", `/templates/greeter/builds/${build.id}/logs`],
      ["POST", `/templates/greeter/builds/${build.id}/cancel`],
      ["DELETE", "/templates/greeter"],
    ] as const) {
      const refused = await cp.call(method, path, bob);
      expect(refused.status, `${method} ${path}`).toBe(404);
    }

    const inUse = await cp.call("DELETE", "/templates/greeter", alice);
    expect(inUse.status).toBe(409);
    expect(inUse.body.code).toBe("template_in_use");
    expect((await cp.call("DELETE", `/sandboxes/${created.body.id}`, alice)).status).toBe(204);
    expect((await cp.call("DELETE", "/templates/greeter", alice)).status).toBe(204);
    expect((await cp.call("GET", "/templates/greeter", alice)).status).toBe(404);
  }, 300_000);

  it("builds from a template and steps, with files uploaded first, and says where a Dockerfile fails", async () => {
    const files = await upload("/templates/files", alice, await archive({ "tool.sh": "echo tool ran" }));
    expect(files.status).toBe(201);
    const { hash } = (await files.json()) as { hash: string };
    const started = await cp.call("POST", "/templates/tooled/builds", alice, {
      from: "ubuntu",
      steps: [
        { type: "COPY", files: hash, src: "tool.sh", dest: "/usr/local/bin/tool", mode: 0o755 },
        // A relative destination is in the working directory.
        { type: "WORKDIR", path: "/opt/tools" },
        { type: "COPY", files: hash, src: "tool.sh", dest: "bin/", mode: 0o755 },
        { type: "RUN", command: "tool > /tool.out && test -x /opt/tools/bin/tool.sh" },
      ],
    });
    expect(started.status, started.text).toBe(202);
    let build = started.body.build;
    while (["waiting", "building"].includes(build.status)) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      build = (await cp.call("GET", `/templates/tooled/builds/${build.id}`, alice)).body;
    }
    expect(build.status).toBe("ready");
    expect(build.steps).toBe(4);
    // Refused steps end their build: nothing is left waiting, and the template can go.
    const refused = await cp.call("POST", "/templates/refused/builds", alice, {
      from: "no-such-base",
      steps: [],
    });
    expect(refused.body.code).toBe("invalid_template_build");
    const left = await cp.call("GET", "/templates/refused", alice);
    expect(left.body.builds.map((b: { status: string }) => b.status)).toEqual(["error"]);
    expect((await cp.call("DELETE", "/templates/refused", alice)).status).toBe(204);

    const bad = await upload(
      "/templates/broken/builds",
      alice,
      await archive({ Dockerfile: "FROM ubuntu\nONBUILD RUN x" }),
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: "invalid_template_build",
      detail: expect.stringContaining("line 2"),
    });
    // What is no archive is a 400 saying so, never a 5xx.
    for (const [body, type] of [
      [Buffer.alloc(0), "application/octet-stream"],
      [Buffer.from("not a tar at all, but long enough to be read as a header or two"), "application/x-tar"],
      [Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3]), "application/gzip"],
    ] as const) {
      const refused = await upload("/templates/garbage/builds", alice, body, type);
      expect([refused.status, ((await refused.json()) as { code: string }).code], type).toEqual([
        400,
        "invalid_template_build",
      ]);
    }
    const builtIn = await upload(
      "/templates/python/builds",
      alice,
      await archive({ Dockerfile: "FROM ubuntu" }),
    );
    expect([builtIn.status, ((await builtIn.json()) as { code: string }).code]).toEqual([
      409,
      "template_name_taken",
    ]);
    const none = await upload("/templates/broken/builds", alice, await archive({ README: "no Dockerfile" }));
    expect(((await none.json()) as { detail: string }).detail).toContain("no Dockerfile");
    // Bob cannot COPY Alice's uploaded files.
    const stolen = await cp.call("POST", "/templates/thief/builds", bob, {
      from: "ubuntu",
      steps: [{ type: "COPY", files: hash, src: ".", dest: "/loot/" }],
    });
    expect(stolen.status).toBe(400);
    expect(stolen.body.code).toBe("template_files_not_found");
    // Bad input: a clear 4xx, never a 5xx.
    for (const body of [{ from: "ubuntu", steps: [{ type: "MOUNT" }] }, { steps: [] }, "{not json"]) {
      const answer = await cp.call("POST", "/templates/bad/builds", alice, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    expect(
      (await cp.call("POST", "/templates/Not%20A%20Name/builds", alice, { from: "ubuntu", steps: [] }))
        .status,
    ).toBe(400);
  }, 300_000);
});
