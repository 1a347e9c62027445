import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId, newSecret } from "@paddock/common";
import { FakeKubeApi } from "@paddock/runtime/testing";
import { startTestServer, type TestServer } from "@paddock/server/testing";
import { NotFoundError, Paddock, Sandbox } from "paddock";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DockerKubelet } from "../support/docker-kubelet.js";

// `paddock serve` with runtime.type = "kubernetes", against a stand-in of the API server whose
// pods a test kubelet really runs on this machine's Docker engine (under runsc, as the gVisor
// RuntimeClass's handler names): the pod spec the runtime sends — init container, entrypoint,
// Secret references, mounts — must work as sent. No cluster runs here; see docs/kubernetes.md.

const cli = join(import.meta.dirname, "../../packages/cli/dist/main.js");

/** Polls `check` until it gives a value, for up to 60 s. */
async function until<T>(check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("not within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const gvisorClass = { metadata: { name: "gvisor" }, handler: "runsc" };

describe("paddock serve on Kubernetes", () => {
  let api: FakeKubeApi;
  let kubelet: DockerKubelet;
  let server: TestServer;
  let dir: string;
  let connection: { baseUrl: string; apiKey: string };

  beforeAll(async () => {
    api = await FakeKubeApi.start();
    api.put("runtimeclasses", gvisorClass);
    kubelet = new DockerKubelet(api, `paddock.test-kubelet=${newId("k")}`);
    dir = mkdtempSync(join(tmpdir(), "paddock-kube-server-"));
    server = await startTestServer({
      config: {
        runtime: { type: "kubernetes", create_timeout_seconds: 60 },
        secure_runtime: { type: "gvisor" },
        kubernetes: { kubeconfig: api.writeKubeconfig(dir) },
        pools: { sizes: { python: 1 } },
        docker: { allowed_host_paths: ["/srv"] },
      },
    });
    await Paddock.signup("kube@example.com", "correct horse battery", { baseUrl: server.url });
    const { session } = await Paddock.login("kube@example.com", "correct horse battery", {
      baseUrl: server.url,
    });
    connection = { baseUrl: server.url, apiKey: session.token };
  });

  afterAll(async () => {
    await server?.dispose();
    await kubelet?.close();
    await api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a sandbox is a gVisor pod, warm from the pool, that runs commands, files and endpoints, and goes with its pod", async () => {
    await until(async () =>
      (await server.server.stack.pools.readyCount("python")) === 1 ? true : undefined,
    );
    const [warm] = api.list("pods");
    const sandbox = await Sandbox.create({ ...connection, template: "python", env: { GREETING: "hello" } });
    expect(sandbox.id).toBe(warm?.metadata.name);
    const pod = api.get("pods", sandbox.id);
    expect(pod?.spec.runtimeClassName).toBe("gvisor");
    expect(pod?.status.phase).toBe("Running");

    const result = await sandbox.commands.run("python3 -c 'print(6*7)'; echo $GREETING; dmesg | head -1");
    expect(result.stdout).toMatch(/^42\nhello\n.*gVisor/);
    // execd's token reached it from the Secret, never through the pod spec.
    expect(JSON.stringify(pod?.spec)).not.toContain(server.server.stack.sandboxes.tokens(sandbox.id).execd);
    await sandbox.files.write("/root/note.txt", "kept");
    expect(await sandbox.files.read("/root/note.txt")).toBe("kept");
    // The endpoint proxy reaches the pod's address.
    await sandbox.commands.run("python3 -m http.server 8000 --directory /root", { background: true });
    const { url } = await sandbox.getEndpoint(8000);
    const served = await until(async () => {
      const response = await fetch(`${url}/note.txt`).catch(() => undefined);
      return response?.ok ? response.text() : undefined;
    });
    expect(served).toBe("kept");

    await sandbox.kill();
    expect(api.get("pods", sandbox.id)).toBeUndefined();
    expect(api.get("secrets", `${sandbox.id}-tokens`)).toBeUndefined();
    await expect(Sandbox.connect(sandbox.id, connection)).rejects.toBeInstanceOf(NotFoundError);
  });

  test("a read-only host path is refused under gVisor, whose sandboxes could remount it (decision 0002)", async () => {
    const pods = api.list("pods").length;
    const created = await server.api("/v1/sandboxes", {
      method: "POST",
      body: JSON.stringify({
        image: { uri: "paddock/template-python:latest" },
        entrypoint: ["sleep", "infinity"],
        timeout: 60,
        volumes: [{ name: "data", host: { path: "/srv/data" }, mountPath: "/data", readOnly: true }],
      }),
    });
    expect(created.status).toBe(400);
    expect(await created.json()).toMatchObject({ code: "invalid_request" });
    expect(api.list("pods")).toHaveLength(pods);
  });

  test("pause and snapshots without a snapshot registry are refused at once, saying what to configure", async () => {
    const sandbox = await Sandbox.create({ ...connection, template: "python" });
    await expect(sandbox.pause()).rejects.toMatchObject({
      code: "snapshot_registry_not_configured",
      status: 503,
    });
    const snapshot = await server.api(`/v1/sandboxes/${sandbox.id}/snapshots`, {
      method: "POST",
      body: "{}",
    });
    expect(snapshot.status).toBe(503);
    expect(await snapshot.json()).toMatchObject({ code: "snapshot_registry_not_configured" });
    expect((await sandbox.refresh()).state).toBe("Running");
    await sandbox.kill();
  });
});

describe("paddock serve refuses a cluster it cannot use", () => {
  /** Runs the built `paddock serve` against a stand-in API server; resolves with its exit and output. */
  async function serve(prepare: (api: FakeKubeApi) => void) {
    const api = await FakeKubeApi.start();
    const dir = mkdtempSync(join(tmpdir(), "paddock-kube-refuse-"));
    try {
      prepare(api);
      const config = join(dir, "paddock.toml");
      writeFileSync(
        config,
        [
          "[server]",
          `data_dir = "${dir}"`,
          "port = 0",
          `api_key = "${newSecret("pdk_")}"`,
          "[runtime]",
          'type = "kubernetes"',
          "[secure_runtime]",
          'type = "gvisor"',
          "[kubernetes]",
          `kubeconfig = "${api.writeKubeconfig(dir)}"`,
          "",
        ].join("\n"),
      );
      const child = spawn(process.execPath, [cli, "serve", "--config", config], {
        env: { PATH: process.env.PATH },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      const code = await new Promise((resolve) => child.once("exit", resolve));
      return { code, output };
    } finally {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("without the RuntimeClass, naming what to create", async () => {
    const { code, output } = await serve(() => undefined);
    expect(code).toBe(1);
    expect(output).toContain('RuntimeClass "gvisor"');
    expect(output).toContain("runsc");
    expect(output).not.toContain("    at ");
  });

  test("without permission in the namespace, naming the missing rule", async () => {
    const { code, output } = await serve((api) => {
      api.put("runtimeclasses", gvisorClass);
      api.denied.add("create pods");
    });
    expect(code).toBe(1);
    expect(output).toContain('resources: ["pods"], verbs: ["create"]');
    expect(output).toContain("deploy/kubernetes/rbac.yaml");
    expect(output).not.toContain("    at ");
  });
});
