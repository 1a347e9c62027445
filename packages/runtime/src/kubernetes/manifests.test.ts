import { EXECD_MOUNT, execdEntrypoint } from "@paddock/common";
import { SelfSubjectAccessReview } from "kubernetes-models/authorization.k8s.io/v1/SelfSubjectAccessReview";
import { Job } from "kubernetes-models/batch/v1/Job";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Pod } from "kubernetes-models/v1/Pod";
import { Secret } from "kubernetes-models/v1/Secret";
import { describe, expect, test } from "vitest";
import type { WorkloadSpec } from "../runtime.js";
import { sandboxCapabilities } from "../runtime.js";
import { isLabelValue, isQualifiedName, splitLabels } from "./labels.js";
import {
  accessReview,
  type PodContext,
  pausedConfigMap,
  pullSecret,
  resumablePod,
  sandboxNetworkPolicy,
  sandboxPod,
  snapshotJob,
  toClientNetworkPolicy,
  tokenSecret,
} from "./manifests.js";

const context: PodContext = {
  namespace: "paddock",
  instance: "default",
  execdImage: "registry.example.com/paddock/execd:0.1.0",
  egressImage: "registry.example.com/paddock/egress:0.1.0",
  egressUpstreamDns: "",
  runtimeClassName: "gvisor",
  imagePullSecret: "registry-credentials",
};

const spec: WorkloadSpec = {
  sandboxId: "sbx-abc123",
  image: "python:3.12-slim",
  entrypoint: ["python", "-m", "http.server"],
  env: { GREETING: "hello", NODE_OPTIONS: "--max-old-space-size=64" },
  labels: { "paddock.record": JSON.stringify({ id: "sbx-abc123", metadata: { team: "a b" } }), tier: "free" },
  cpuMillis: 1500,
  memoryBytes: 2 ** 30,
  gpus: 1,
  diskBytes: 10 * 2 ** 30,
  volumes: [
    { name: "data", mountPath: "/data", host: { path: "/srv/data" }, readOnly: true },
    { name: "work", mountPath: "/work", pvc: { claimName: "shared-work" }, subPath: "team-a" },
  ],
  networkPolicy: { defaultAction: "deny", egress: [{ action: "allow", target: "pypi.org" }] },
  execdToken: "execd-secret",
  egressToken: "egress-secret",
};

describe("sandboxPod", () => {
  const pod = sandboxPod(context, spec, { pullSecret: true });
  const [sandbox, egress] = pod.spec?.containers ?? [];

  test("passes Kubernetes' Pod schema", () => {
    expect(() => new Pod(pod as never).validate()).not.toThrow();
  });

  test("runs under the RuntimeClass, hardened like a Docker sandbox", () => {
    expect(pod.spec).toMatchObject({
      runtimeClassName: "gvisor",
      hostname: "sbx-abc123",
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
    });
    expect(sandbox?.securityContext).toEqual({
      capabilities: { drop: ["ALL"], add: sandboxCapabilities },
      allowPrivilegeEscalation: false,
      privileged: false,
    });
    expect(egress?.securityContext?.capabilities).toEqual({ drop: ["ALL"], add: ["NET_ADMIN"] });
  });

  test("limits and requests from the spec", () => {
    const quantities = {
      cpu: "1500m",
      memory: String(2 ** 30),
      "ephemeral-storage": String(10 * 2 ** 30),
      "nvidia.com/gpu": "1",
    };
    expect(sandbox?.resources).toEqual({ limits: quantities, requests: quantities });
  });

  test("execd comes from an init container into a read-only emptyDir; the entrypoint is wrapped as in Docker", () => {
    const init = pod.spec?.initContainers?.[0];
    expect(init?.image).toBe(context.execdImage);
    expect(init?.command?.[0]).toBe(`${EXECD_MOUNT}/bin/busybox`);
    const staging = init?.volumeMounts?.[0];
    expect(staging?.mountPath).not.toBe(EXECD_MOUNT);
    expect(sandbox?.volumeMounts?.[0]).toEqual({
      name: staging?.name,
      mountPath: EXECD_MOUNT,
      readOnly: true,
    });
    expect(pod.spec?.volumes?.find((v) => v.name === staging?.name)?.emptyDir).toBeDefined();
    expect(sandbox?.command).toEqual(execdEntrypoint(spec.entrypoint));
    expect(sandbox?.image).toBe("python:3.12-slim");
  });

  test("tokens by secretKeyRef, never inline; NODE_* stashed; execd waits for the sidecar", () => {
    const env = sandbox?.env ?? [];
    expect(env).toContainEqual({
      name: "PADDOCK_EXECD_TOKEN",
      valueFrom: { secretKeyRef: { name: "sbx-abc123-tokens", key: "execd-token" } },
    });
    expect(egress?.env).toContainEqual({
      name: "PADDOCK_EGRESS_TOKEN",
      valueFrom: { secretKeyRef: { name: "sbx-abc123-tokens", key: "egress-token" } },
    });
    expect(JSON.stringify(pod)).not.toMatch(/execd-secret|egress-secret/);
    expect(env).toContainEqual({ name: "NODE_OPTIONS", value: "" });
    expect(env).toContainEqual({ name: "PADDOCK_STASHED_NODE_OPTIONS", value: "--max-old-space-size=64" });
    expect(env).toContainEqual({ name: "PADDOCK_WAIT_EGRESS", value: "1" });
    expect(env).toContainEqual({ name: "PADDOCK_CPU_LIMIT", value: "1.5" });
    expect(egress?.env).toContainEqual({
      name: "PADDOCK_EGRESS_POLICY",
      value: JSON.stringify(spec.networkPolicy),
    });
  });

  test("labels like the Docker containers; values that are not label values go to annotations", () => {
    expect(pod.metadata?.labels).toEqual({
      tier: "free",
      "paddock.managed": "true",
      "paddock.instance": "default",
      "paddock.role": "sandbox",
      "paddock.sandbox": "sbx-abc123",
    });
    expect(pod.metadata?.annotations).toEqual({ "paddock.record": spec.labels["paddock.record"] });
  });

  test("volumes, pull secrets, and no sidecar without a network policy", () => {
    expect(pod.spec?.volumes?.slice(1)).toEqual([
      { name: "volume-0", hostPath: { path: "/srv/data", type: "Directory" } },
      { name: "volume-1", persistentVolumeClaim: { claimName: "shared-work" } },
    ]);
    expect(sandbox?.volumeMounts?.[2]).toEqual({
      name: "volume-1",
      mountPath: "/work",
      readOnly: false,
      subPath: "team-a",
    });
    // A read-only claim is read-only on the pod's volume: the node mounts it so (decision 0002).
    const readOnlyClaim = sandboxPod(
      context,
      {
        ...spec,
        volumes: [{ name: "ref", mountPath: "/ref", pvc: { claimName: "reference" }, readOnly: true }],
      },
      { pullSecret: false },
    );
    expect(readOnlyClaim.spec?.volumes?.[1]).toEqual({
      name: "volume-0",
      persistentVolumeClaim: { claimName: "reference", readOnly: true },
    });
    expect(pod.spec?.imagePullSecrets).toEqual([
      { name: "sbx-abc123-pull" },
      { name: "registry-credentials" },
    ]);
    const plain = sandboxPod(
      { ...context, runtimeClassName: "", imagePullSecret: "" },
      { ...spec, networkPolicy: undefined } as WorkloadSpec,
      { pullSecret: false },
    );
    expect(plain.spec?.containers.map((c) => c.name)).toEqual(["sandbox"]);
    expect(plain.spec?.runtimeClassName).toBeUndefined();
    expect(plain.spec?.imagePullSecrets).toBeUndefined();
  });
});

describe("other objects", () => {
  test("the token Secret and the pull Secret", () => {
    const tokens = tokenSecret(context, spec);
    expect(() => new Secret(tokens as never).validate()).not.toThrow();
    expect(tokens.stringData).toEqual({ "execd-token": "execd-secret", "egress-token": "egress-secret" });
    const pull = pullSecret(context, spec.sandboxId, "ghcr.io/team/app:1", { username: "u", password: "p" });
    expect(() => new Secret(pull as never).validate()).not.toThrow();
    const auths = JSON.parse(pull.stringData?.[".dockerconfigjson"] ?? "{}").auths;
    expect(auths["ghcr.io"]).toEqual({
      username: "u",
      password: "p",
      auth: Buffer.from("u:p").toString("base64"),
    });
  });

  test("the NetworkPolicy: server in, public internet and DNS out", () => {
    const policy = sandboxNetworkPolicy({
      namespace: "paddock",
      instance: "default",
      serverPodSelector: "app.kubernetes.io/name=paddock",
      serverNamespaceSelector: "kubernetes.io/metadata.name=paddock-system",
      serverCidrs: ["203.0.113.7/32"],
      clusterCidrs: ["10.244.0.0/16", "10.96.0.0/12"],
    });
    expect(() => new NetworkPolicy(policy as never).validate()).not.toThrow();
    expect(policy.spec.podSelector?.matchLabels).toMatchObject({
      "paddock.role": "sandbox",
      "paddock.instance": "default",
    });
    expect(policy.spec.ingress[0]?.from).toEqual([
      {
        podSelector: { matchLabels: { "app.kubernetes.io/name": "paddock" } },
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "paddock-system" } },
      },
      { ipBlock: { cidr: "203.0.113.7/32" } },
    ]);
    expect(policy.spec.egress?.[0]?.to?.[0]?.ipBlock).toEqual({
      cidr: "0.0.0.0/0",
      except: [
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "10.244.0.0/16",
        "10.96.0.0/12",
      ],
    });
    expect(policy.spec.egress?.[1]?.ports).toEqual([
      { protocol: "UDP", port: 53 },
      { protocol: "TCP", port: 53 },
    ]);
    // The client's model names `from` `_from`; its serializer writes it back as `from`.
    expect(toClientNetworkPolicy(policy).spec?.ingress?.[0]?._from).toEqual(policy.spec.ingress[0]?.from);
    const closed = sandboxNetworkPolicy({
      namespace: "p",
      instance: "i",
      serverPodSelector: "",
      serverNamespaceSelector: "",
      serverCidrs: [],
      clusterCidrs: [],
    });
    expect(closed.spec.ingress).toEqual([]);
  });

  test("the paused record and the pod it recreates", () => {
    const running = { ...sandboxPod(context, spec, { pullSecret: false }) };
    running.spec = { ...running.spec, nodeName: "node-1", containers: running.spec?.containers ?? [] };
    running.metadata = { ...running.metadata, uid: "u-1", resourceVersion: "42" };
    const again = resumablePod(running, "registry.example.com/paddock/paddock-snapshot:sbx-abc123-pause-1");
    expect(() => new Pod(again as never).validate()).not.toThrow();
    expect(again.spec?.nodeName).toBeUndefined();
    expect(again.metadata).not.toHaveProperty("uid");
    expect(again.spec?.containers[0]?.image).toBe(
      "registry.example.com/paddock/paddock-snapshot:sbx-abc123-pause-1",
    );
    expect(again.spec?.containers[1]?.image).toBe(context.egressImage);
    const record = pausedConfigMap(context, again);
    expect(() => new ConfigMap(record as never).validate()).not.toThrow();
    expect(record.metadata?.labels?.["paddock.role"]).toBe("paused");
    expect(JSON.parse(record.data?.pod ?? "{}")).toEqual(again);
  });

  test("the snapshot Job runs privileged on the sandbox's node against containerd", () => {
    const job = snapshotJob({
      namespace: "paddock",
      instance: "default",
      name: "snap-1",
      sandboxId: spec.sandboxId,
      nodeName: "node-3",
      containerId: "abc",
      imageRef: "registry.example.com/paddock/paddock-snapshot:snap-1",
      snapshotImage: "example/nerdctl:2",
      containerdSocket: "/run/containerd/containerd.sock",
      pushSecret: "registry-credentials",
      timeoutSeconds: 600,
    });
    expect(() => new Job(job as never).validate()).not.toThrow();
    const pod = job.spec?.template.spec;
    expect(pod?.nodeName).toBe("node-3");
    expect(pod?.containers[0]?.securityContext?.privileged).toBe(true);
    expect(pod?.containers[0]?.command?.join(" ")).toMatch(
      /nerdctl --namespace k8s\.io commit.*nerdctl --namespace k8s\.io push/s,
    );
    expect(pod?.volumes?.[0]).toEqual({
      name: "containerd",
      hostPath: { path: "/run/containerd/containerd.sock", type: "Socket" },
    });
    expect(job.spec?.backoffLimit).toBe(0);
    expect(job.spec?.activeDeadlineSeconds).toBe(600);
  });

  test("access reviews", () => {
    const review = accessReview("paddock", { group: "", resource: "pods", subresource: "log", verb: "get" });
    expect(() => new SelfSubjectAccessReview(review as never).validate()).not.toThrow();
    expect(review.spec.resourceAttributes).toEqual({
      namespace: "paddock",
      group: "",
      resource: "pods",
      subresource: "log",
      verb: "get",
    });
  });
});

describe("label syntax", () => {
  test("keys and values", () => {
    expect(isQualifiedName("paddock.record")).toBe(true);
    expect(isQualifiedName("example.com/team")).toBe(true);
    expect(isQualifiedName("Example.com/team")).toBe(false);
    expect(isQualifiedName("-bad")).toBe(false);
    expect(isLabelValue("")).toBe(true);
    expect(isLabelValue("a".repeat(63))).toBe(true);
    expect(isLabelValue("a".repeat(64))).toBe(false);
    expect(isLabelValue('{"id":1}')).toBe(false);
    expect(splitLabels({ ok: "yes", json: "{}" })).toEqual({
      labels: { ok: "yes" },
      annotations: { json: "{}" },
    });
    expect(() => splitLabels({ "bad key": "x" })).toThrow(/not a Kubernetes key/);
  });
});
