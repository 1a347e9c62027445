import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createLogger,
  type DeepPartial,
  EXECD_PORT,
  EXECD_TOKEN_HEADER,
  loadConfig,
  type PaddockConfig,
  PaddockError,
} from "@paddock/common";
import { afterEach, describe, expect, test } from "vitest";
import { KubernetesRuntime } from "../src/kubernetes/kubernetes-runtime.js";
import type { WorkloadExit, WorkloadSpec } from "../src/runtime.js";
import { FakeKubeApi, type KubeObject } from "../src/testing/fake-kube-api.js";

const logger = createLogger({ level: "silent" });
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  fake: FakeKubeApi;
  runtime: KubernetesRuntime;
  config: PaddockConfig;
}

/** A runtime pointed at a fresh stand-in API server through a kubeconfig file, started unless told not to. */
async function setup(
  overrides: DeepPartial<PaddockConfig> = {},
  options: { start?: boolean; prepare?: (fake: FakeKubeApi) => void } = {},
): Promise<Setup> {
  const fake = await FakeKubeApi.start();
  const directory = mkdtempSync(join(tmpdir(), "paddock-kube-"));
  const config = loadConfig({
    env: {},
    overrides: {
      ...overrides,
      server: { instance: "test", ...overrides.server },
      runtime: { create_timeout_seconds: 2, ...overrides.runtime },
      secure_runtime: { type: "", ...overrides.secure_runtime },
      kubernetes: {
        namespace: "paddock",
        kubeconfig: fake.writeKubeconfig(directory),
        ...overrides.kubernetes,
      },
    },
  });
  const runtime = new KubernetesRuntime(config, logger, { pollIntervalMs: 20, watchBackoffMs: 20 });
  cleanups.push(async () => {
    await runtime.close();
    await fake.close();
    rmSync(directory, { recursive: true, force: true });
  });
  options.prepare?.(fake);
  if (options.start !== false) await runtime.start();
  return { fake, runtime, config };
}

/** A stand-in execd on a loopback address: answers /ping 200 with the right token, 401 without. */
async function serveExecd(ip: string, token: string): Promise<{ tokens: string[] }> {
  const seen = { tokens: [] as string[] };
  const server: Server = createServer((request, response) => {
    const given = request.headers[EXECD_TOKEN_HEADER.toLowerCase()];
    if (typeof given === "string") seen.tokens.push(given);
    response.writeHead(request.url === "/ping" && given === token ? 200 : 401).end();
  });
  await new Promise<void>((resolve) => server.listen(EXECD_PORT, ip, resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return seen;
}

function workload(sandboxId: string, extra: Partial<WorkloadSpec> = {}): WorkloadSpec {
  return {
    sandboxId,
    image: "python:3.12-slim",
    entrypoint: ["sleep", "infinity"],
    env: { GREETING: "hello" },
    labels: { "paddock.record": JSON.stringify({ id: sandboxId, owner: "acct-1" }) },
    cpuMillis: 500,
    memoryBytes: 512 * 2 ** 20,
    volumes: [],
    execdToken: `execd-${sandboxId}`,
    egressToken: `egress-${sandboxId}`,
    ...extra,
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The sandbox's objects that still exist in the stand-in. */
function leftovers(fake: FakeKubeApi, sandboxId: string): string[] {
  return [
    fake.get("pods", sandboxId) && "pod",
    fake.get("secrets", `${sandboxId}-tokens`) && "tokens secret",
    fake.get("secrets", `${sandboxId}-pull`) && "pull secret",
    fake.get("configmaps", `${sandboxId}-paused`) && "paused record",
  ].filter((entry): entry is string => Boolean(entry));
}

function terminated(state: Record<string, unknown>) {
  return {
    phase: "Failed",
    containerStatuses: [
      { name: "sandbox", image: "python", ready: false, restartCount: 0, state: { terminated: state } },
    ],
  };
}

describe("KubernetesRuntime.start", () => {
  test("a missing RuntimeClass stops startup with the manifest that would create it", async () => {
    const { runtime } = await setup({ secure_runtime: { type: "gvisor" } }, { start: false });
    await expect(runtime.start()).rejects.toThrow(
      /RuntimeClass "gvisor".*metadata\.name: gvisor, handler: runsc/,
    );
  });

  test("a forbidden verb stops startup with the Role rule that is missing", async () => {
    const { runtime } = await setup(
      {},
      {
        start: false,
        prepare: (fake) => {
          fake.denied.add("delete pods");
          fake.denied.add("get pods/log");
        },
      },
    );
    const failure = runtime.start();
    await expect(failure).rejects.toThrow(
      /\{apiGroups: \[""\], resources: \["pods"\], verbs: \["delete"\]\}/,
    );
    await expect(failure).rejects.toThrow(/resources: \["pods\/log"\], verbs: \["get"\]/);
  });

  test("asks one access review per verb, resolves gVisor under auto, writes the NetworkPolicy", async () => {
    const { fake, runtime } = await setup(
      {
        secure_runtime: { type: "auto" },
        kubernetes: { cluster_cidrs: ["10.244.0.0/16"], server_cidrs: ["203.0.113.7/32"] },
      },
      { prepare: (fake) => fake.put("runtimeclasses", { metadata: { name: "gvisor" }, handler: "runsc" }) },
    );
    expect(runtime.secureRuntime).toEqual({
      type: "gvisor",
      engineName: "gvisor",
      supportsNetworkPolicy: false,
    });
    const reviews = fake.requestsTo("POST", /selfsubjectaccessreviews$/).map((request) => {
      const attributes = (request.body as KubeObject).spec.resourceAttributes;
      return `${attributes.verb} ${attributes.resource}${attributes.subresource ? `/${attributes.subresource}` : ""}`;
    });
    expect(reviews).toEqual(
      expect.arrayContaining([
        "create pods",
        "watch pods",
        "get pods/log",
        "patch secrets",
        "update networkpolicies",
      ]),
    );
    expect(reviews).not.toContain("create jobs"); // no snapshot registry: no Job rights needed
    const policy = fake.get("networkpolicies", "paddock-sandboxes-test");
    expect(policy?.spec.ingress[0].from).toEqual([
      { podSelector: { matchLabels: { "app.kubernetes.io/name": "paddock" } } },
      { ipBlock: { cidr: "203.0.113.7/32" } },
    ]);
    expect(policy?.spec.egress[0].to[0].ipBlock.except).toEqual(
      expect.arrayContaining(["10.0.0.0/8", "169.254.0.0/16", "10.244.0.0/16"]),
    );
    // A second start updates the policy in place.
    await runtime.start();
    expect(fake.requestsTo("PUT", /networkpolicies\/paddock-sandboxes-test$/)).toHaveLength(1);
  });
});

describe("KubernetesRuntime.createWorkload", () => {
  test("posts the Secret and the pod, owns the Secret by the pod, and answers with the pod IP once execd answers", async () => {
    const { fake, runtime } = await setup();
    const execd = await serveExecd("127.0.0.42", "execd-sbx-one");
    fake.onPodCreated = (pod) => setTimeout(() => fake.runPod(pod.metadata.name, "127.0.0.42"), 50);
    const created = await runtime.createWorkload(workload("sbx-one"));
    const pod = fake.get("pods", "sbx-one");
    expect(created).toEqual({ containerId: pod?.metadata.uid, address: "127.0.0.42" });
    expect(execd.tokens).toContain("execd-sbx-one");
    const secret = fake.get("secrets", "sbx-one-tokens");
    expect(Buffer.from(secret?.data["execd-token"], "base64").toString()).toBe("execd-sbx-one");
    expect(secret?.metadata.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Pod", name: "sbx-one", uid: pod?.metadata.uid },
    ]);
    const sandbox = pod?.spec.containers[0];
    expect(sandbox.env).toContainEqual({
      name: "PADDOCK_EXECD_TOKEN",
      valueFrom: { secretKeyRef: { name: "sbx-one-tokens", key: "execd-token" } },
    });
    expect(JSON.stringify(pod)).not.toContain("execd-sbx-one");
    expect(pod?.metadata.labels).toMatchObject({ "paddock.instance": "test", "paddock.sandbox": "sbx-one" });
    expect(JSON.parse(pod?.metadata.annotations["paddock.record"])).toEqual({
      id: "sbx-one",
      owner: "acct-1",
    });
    expect(await runtime.inspectWorkload("sbx-one")).toMatchObject({
      state: "running",
      address: "127.0.0.42",
    });
  });

  test("registry credentials become a pull Secret the pod names", async () => {
    const { fake, runtime } = await setup();
    await serveExecd("127.0.0.43", "execd-sbx-auth");
    fake.onPodCreated = (pod) => fake.runPod(pod.metadata.name, "127.0.0.43");
    await runtime.createWorkload(
      workload("sbx-auth", {
        image: "registry.example.com/team/app:1",
        imageAuth: { username: "u", password: "p" },
      }),
    );
    const secret = fake.get("secrets", "sbx-auth-pull");
    expect(secret?.type).toBe("kubernetes.io/dockerconfigjson");
    const config = JSON.parse(Buffer.from(secret?.data[".dockerconfigjson"], "base64").toString());
    expect(config.auths["registry.example.com"].username).toBe("u");
    expect(secret?.metadata.ownerReferences[0].kind).toBe("Pod");
    expect(fake.get("pods", "sbx-auth")?.spec.imagePullSecrets).toEqual([{ name: "sbx-auth-pull" }]);
  });

  test("a pod that never schedules is deleted with its Secret after the create timeout", async () => {
    const { fake, runtime } = await setup({ runtime: { create_timeout_seconds: 1 } });
    fake.onPodCreated = (pod) =>
      fake.setPodStatus(pod.metadata.name, {
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message: "0/3 nodes are available: 3 Insufficient cpu.",
          },
        ],
      });
    const started = Date.now();
    const failure = runtime.createWorkload(workload("sbx-pending"));
    await expect(failure).rejects.toThrow(
      /did not start within 1 s.*0\/3 nodes are available: 3 Insufficient cpu/,
    );
    await expect(failure).rejects.toMatchObject({ code: "runtime_unavailable" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    await until(() => leftovers(fake, "sbx-pending").length === 0, "cleanup");
  });

  test("an image that cannot be pulled fails at once, as image_not_found or registry_auth_failed", async () => {
    const { fake, runtime } = await setup({ runtime: { create_timeout_seconds: 30 } });
    const pullFailure = (message: string) => (pod: KubeObject) =>
      fake.setPodStatus(pod.metadata.name, {
        containerStatuses: [
          {
            name: "sandbox",
            image: pod.spec.containers[0].image,
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: "ErrImagePull", message } },
          },
        ],
      });
    fake.onPodCreated = pullFailure('failed to resolve reference "docker.io/library/nope:1": not found');
    const started = Date.now();
    const missing = runtime.createWorkload(workload("sbx-nope", { image: "nope:1" }));
    await expect(missing).rejects.toBeInstanceOf(PaddockError);
    await expect(missing).rejects.toMatchObject({ code: "image_not_found" });
    expect(Date.now() - started).toBeLessThan(5000);
    await until(() => leftovers(fake, "sbx-nope").length === 0, "cleanup");

    fake.onPodCreated = pullFailure("401 Unauthorized");
    await expect(runtime.createWorkload(workload("sbx-private"))).rejects.toMatchObject({
      code: "registry_auth_failed",
    });
    await until(() => leftovers(fake, "sbx-private").length === 0, "cleanup");
  });

  test("aborting the create stops waiting and removes what was made", async () => {
    const { fake, runtime } = await setup({ runtime: { create_timeout_seconds: 30 } });
    const controller = new AbortController();
    fake.onPodCreated = () => setTimeout(() => controller.abort(new Error("caller went away")), 100);
    const started = Date.now();
    await expect(runtime.createWorkload(workload("sbx-abort"), controller.signal)).rejects.toThrow(
      "caller went away",
    );
    expect(Date.now() - started).toBeLessThan(2000);
    await until(() => leftovers(fake, "sbx-abort").length === 0, "cleanup");
  });

  test("a sandbox whose process exits before execd answers fails with its exit code", async () => {
    const { fake, runtime } = await setup({ runtime: { create_timeout_seconds: 30 } });
    fake.onPodCreated = (pod) =>
      fake.setPodStatus(pod.metadata.name, terminated({ exitCode: 3, reason: "Error" }));
    await expect(runtime.createWorkload(workload("sbx-crash"))).rejects.toThrow(
      /exited \(code 3\) before execd answered/,
    );
    await until(() => leftovers(fake, "sbx-crash").length === 0, "cleanup");
  });
});

describe("KubernetesRuntime lifecycle", () => {
  test("removeWorkload deletes the pod and its Secrets, and is idempotent", async () => {
    const { fake, runtime } = await setup();
    await runtime.removeWorkload("sbx-never-existed");
    await serveExecd("127.0.0.44", "execd-sbx-rm");
    fake.onPodCreated = (pod) => fake.runPod(pod.metadata.name, "127.0.0.44");
    await runtime.createWorkload(workload("sbx-rm"));
    await runtime.removeWorkload("sbx-rm");
    await runtime.removeWorkload("sbx-rm");
    expect(fake.requestsTo("DELETE", /\/secrets\/sbx-rm-tokens$/)).toHaveLength(2);
    await until(() => leftovers(fake, "sbx-rm").length === 0, "removal");
    expect(await runtime.inspectWorkload("sbx-rm")).toEqual({ state: "missing" });
  });

  test("watchExits reports an OOM kill, and not a pod removeWorkload deleted", async () => {
    const { fake, runtime } = await setup();
    await serveExecd("127.0.0.45", "execd-sbx-oom");
    await serveExecd("127.0.0.46", "execd-sbx-removed");
    fake.onPodCreated = (pod) =>
      fake.runPod(pod.metadata.name, pod.metadata.name === "sbx-oom" ? "127.0.0.45" : "127.0.0.46");
    await runtime.createWorkload(workload("sbx-oom"));
    await runtime.createWorkload(workload("sbx-removed"));
    const exits: Array<[string, WorkloadExit]> = [];
    runtime.watchExits((sandboxId, exit) => exits.push([sandboxId, exit]));
    await until(() => fake.openWatches === 1, "the watch");
    await runtime.removeWorkload("sbx-removed");
    fake.setPodStatus("sbx-oom", terminated({ exitCode: 137, reason: "OOMKilled" }));
    await until(() => exits.length > 0, "the exit");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(exits).toEqual([["sbx-oom", { exitCode: 137, oomKilled: true }]]);
    expect(await runtime.inspectWorkload("sbx-oom")).toMatchObject({
      state: "exited",
      exitCode: 137,
      oomKilled: true,
    });
  });

  test("a lost watch reconnects with a fresh list and a later exit is still reported", async () => {
    const { fake, runtime } = await setup();
    await serveExecd("127.0.0.47", "execd-sbx-later");
    fake.onPodCreated = (pod) => fake.runPod(pod.metadata.name, "127.0.0.47");
    await runtime.createWorkload(workload("sbx-later"));
    const exits: string[] = [];
    runtime.watchExits((sandboxId) => exits.push(sandboxId));
    await until(() => fake.openWatches === 1, "the watch");
    const lists = () =>
      fake.requestsTo("GET", /\/pods$/).filter((r) => r.query.get("watch") !== "true").length;
    const listsBefore = lists();
    fake.failNextWatch(500);
    fake.dropWatches();
    await until(
      () => fake.openWatches === 1 && lists() >= listsBefore + 2,
      "reconnection after a failed watch",
    );
    fake.setPodStatus("sbx-later", terminated({ exitCode: 1, reason: "Error" }));
    await until(() => exits.length === 1, "the exit after reconnecting");
    expect(exits).toEqual(["sbx-later"]);
  });

  test("410 Gone makes the watch list again, which reports the exit it missed", async () => {
    const { fake, runtime } = await setup();
    await serveExecd("127.0.0.48", "execd-sbx-gone");
    fake.onPodCreated = (pod) => fake.runPod(pod.metadata.name, "127.0.0.48");
    await runtime.createWorkload(workload("sbx-gone"));
    const exits: string[] = [];
    runtime.watchExits((sandboxId) => exits.push(sandboxId));
    await until(() => fake.openWatches === 1, "the watch");
    // The exit happens where the watch cannot see it, then the server expires the watch.
    fake.setPodStatus("sbx-gone", terminated({ exitCode: 2, reason: "Error" }), { unseen: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(exits).toEqual([]);
    fake.expireWatches();
    await until(() => exits.length === 1, "the missed exit");
    await until(() => fake.openWatches === 1, "a new watch");
    expect(exits).toEqual(["sbx-gone"]);
  });

  test("listWorkloads maps pods and paused records, merging annotations back into labels", async () => {
    const { fake, runtime } = await setup();
    await serveExecd("127.0.0.49", "execd-sbx-live");
    fake.onPodCreated = (pod) => fake.runPod(pod.metadata.name, "127.0.0.49");
    await runtime.createWorkload(workload("sbx-live"));
    const ours = { "paddock.managed": "true", "paddock.instance": "test", "paddock.role": "sandbox" };
    const dead = fake.put("pods", {
      metadata: {
        name: "sbx-dead",
        namespace: "paddock",
        labels: { ...ours, "paddock.sandbox": "sbx-dead" },
      },
      spec: { containers: [] },
      status: terminated({ exitCode: 1 }),
    });
    fake.put("pods", {
      metadata: {
        name: "sbx-other",
        namespace: "paddock",
        labels: { ...ours, "paddock.instance": "other", "paddock.sandbox": "sbx-other" },
      },
      spec: { containers: [] },
      status: { phase: "Running" },
    });
    fake.put("configmaps", {
      metadata: {
        name: "sbx-asleep-paused",
        namespace: "paddock",
        labels: { ...ours, "paddock.role": "paused", "paddock.sandbox": "sbx-asleep" },
      },
      data: {
        pod: JSON.stringify({
          metadata: { labels: { a: "b" }, annotations: { "paddock.record": '{"id":"sbx-asleep"}' } },
        }),
      },
    });
    const workloads = await runtime.listWorkloads();
    const byId = Object.fromEntries(workloads.map((w) => [w.sandboxId, w]));
    expect(Object.keys(byId).sort()).toEqual(["sbx-asleep", "sbx-dead", "sbx-live"]);
    expect(byId["sbx-live"]?.state).toBe("running");
    expect(JSON.parse(byId["sbx-live"]?.labels["paddock.record"] ?? "{}")).toEqual({
      id: "sbx-live",
      owner: "acct-1",
    });
    expect(byId["sbx-dead"]).toMatchObject({ state: "exited", containerId: dead.metadata.uid });
    expect(byId["sbx-asleep"]).toMatchObject({
      state: "paused",
      labels: { a: "b", "paddock.record": '{"id":"sbx-asleep"}' },
    });
  });

  test("workloadLogs reads the sandbox container's log and keeps its tail", async () => {
    const { fake, runtime } = await setup();
    fake.put("pods", { metadata: { name: "sbx-logs", namespace: "paddock" }, spec: { containers: [] } });
    fake.podLogs.set("sbx-logs", "first line\nsecond line\nlast line\n");
    expect(await runtime.workloadLogs("sbx-logs", 10)).toBe("last line\n");
    const [request] = fake.requestsTo("GET", /\/pods\/sbx-logs\/log$/);
    expect(request?.query.get("container")).toBe("sandbox");
    expect(request?.query.get("tailLines")).toBe("5000");
  });
});

describe("KubernetesRuntime pause, resume and snapshots", () => {
  const registry = { snapshot_registry: "registry.example.com/paddock", snapshot_image: "example/nerdctl:2" };

  test("without a snapshot registry, pause and snapshots fail with a code that says what to configure", async () => {
    const { runtime } = await setup();
    for (const attempt of [runtime.snapshotWorkload("sbx-x", "snap-1"), runtime.pauseWorkload("sbx-x")]) {
      await expect(attempt).rejects.toMatchObject({ code: "snapshot_registry_not_configured" });
      await expect(attempt).rejects.toThrow(/kubernetes\.snapshot_registry.*kubernetes\.snapshot_image/);
    }
  });

  test("pause commits on the node, deletes the pod and keeps its Secret; resume recreates it from the image", async () => {
    const { fake, runtime } = await setup({ kubernetes: registry });
    await serveExecd("127.0.0.50", "execd-sbx-nap");
    fake.onPodCreated = (pod) => fake.runPod(pod.metadata.name, "127.0.0.50", "node-7");
    fake.onJobCreated = (job) => fake.setJobStatus(job.metadata.name, { succeeded: 1 });
    const created = await runtime.createWorkload(workload("sbx-nap"));

    await runtime.pauseWorkload("sbx-nap");
    const [jobRequest] = fake.requestsTo("POST", /\/jobs$/);
    const job = jobRequest?.body as KubeObject;
    expect(job.spec.template.spec.nodeName).toBe("node-7");
    const env = Object.fromEntries(
      job.spec.template.spec.containers[0].env.map((e: { name: string; value: string }) => [e.name, e.value]),
    );
    expect(env.PADDOCK_CONTAINER_ID).toBe(`sandbox-${created.containerId}`);
    expect(env.PADDOCK_IMAGE_REF).toMatch(
      /^registry\.example\.com\/paddock\/paddock-snapshot:sbx-nap-pause-/,
    );
    expect(fake.get("jobs", job.metadata.name)).toBeUndefined();
    await until(() => !fake.get("pods", "sbx-nap"), "the pod to go");
    expect(fake.get("secrets", "sbx-nap-tokens")?.metadata.ownerReferences[0].kind).toBe("ConfigMap");
    expect(await runtime.inspectWorkload("sbx-nap")).toMatchObject({ state: "paused" });
    expect((await runtime.listWorkloads()).map((w) => [w.sandboxId, w.state])).toEqual([
      ["sbx-nap", "paused"],
    ]);

    await runtime.resumeWorkload("sbx-nap");
    const pod = fake.get("pods", "sbx-nap");
    expect(pod?.metadata.uid).not.toBe(created.containerId);
    expect(pod?.spec.containers[0].image).toBe(env.PADDOCK_IMAGE_REF);
    expect(pod?.spec.nodeName).toBe("node-7"); // set again by the stand-in kubelet, not carried over
    expect(pod?.metadata.labels["paddock.sandbox"]).toBe("sbx-nap");
    expect(fake.get("secrets", "sbx-nap-tokens")?.metadata.ownerReferences[0]).toMatchObject({
      kind: "Pod",
      uid: pod?.metadata.uid,
    });
    expect(fake.get("configmaps", "sbx-nap-paused")).toBeUndefined();
    expect(await runtime.inspectWorkload("sbx-nap")).toMatchObject({
      state: "running",
      address: "127.0.0.50",
    });
    const recreated = fake.requestsTo("POST", /\/pods$/).at(-1)?.body as KubeObject;
    expect(recreated.spec.nodeName).toBeUndefined();
  });

  test("a snapshot pushes to the registry under its id; a failed Job says why and is deleted", async () => {
    const { fake, runtime } = await setup({
      kubernetes: { ...registry, image_pull_secret: "registry-credentials" },
    });
    await serveExecd("127.0.0.51", "execd-sbx-snap");
    fake.onPodCreated = (pod) => fake.runPod(pod.metadata.name, "127.0.0.51");
    await runtime.createWorkload(workload("sbx-snap"));
    fake.onJobCreated = (job) => fake.setJobStatus(job.metadata.name, { succeeded: 1 });
    expect(await runtime.snapshotWorkload("sbx-snap", "snap-one")).toBe(
      "registry.example.com/paddock/paddock-snapshot:snap-one",
    );
    const job = fake.requestsTo("POST", /\/jobs$/)[0]?.body as KubeObject;
    expect(job.spec.template.spec.volumes).toContainEqual({
      name: "push-secret",
      secret: {
        secretName: "registry-credentials",
        items: [{ key: ".dockerconfigjson", path: "config.json" }],
      },
    });

    fake.onJobCreated = (job) =>
      fake.setJobStatus(job.metadata.name, {
        failed: 1,
        conditions: [
          {
            type: "Failed",
            status: "True",
            reason: "BackoffLimitExceeded",
            message: "Job has reached the specified backoff limit",
          },
        ],
      });
    await expect(runtime.snapshotWorkload("sbx-snap", "snap-two")).rejects.toThrow(
      /snap-two failed: Job has reached/,
    );
    expect(fake.get("jobs", "snap-two")).toBeUndefined();
  });
});
