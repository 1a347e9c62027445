import type {
  V1ConfigMap,
  V1Container,
  V1EnvVar,
  V1Job,
  V1NetworkPolicy,
  V1NetworkPolicyPeer,
  V1NetworkPolicyPort,
  V1NetworkPolicySpec,
  V1Pod,
  V1ResourceRequirements,
  V1Secret,
  V1SecurityContext,
  V1SelfSubjectAccessReview,
  V1Volume,
  V1VolumeMount,
} from "@kubernetes/client-node";
import {
  EGRESS_POLICY_ENV,
  EGRESS_TOKEN_ENV,
  EGRESS_UPSTREAM_DNS_ENV,
  EXECD_CPU_LIMIT_ENV,
  EXECD_MOUNT,
  EXECD_TOKEN_ENV,
  EXECD_WAIT_EGRESS_ENV,
  execdEntrypoint,
  stashNodeVariables,
} from "@paddock/common";
import { type RegistryAuth, sandboxCapabilities, type WorkloadSpec } from "../runtime.js";
import { ownLabels, parseSelector, splitLabels } from "./labels.js";

/** Container and volume names inside a sandbox pod. */
export const sandboxContainer = "sandbox";
export const egressContainer = "egress";
export const execdInitContainer = "execd";
const execdVolume = "paddock-execd";
/** Where the init container sees the emptyDir it fills (the execd image keeps its files at EXECD_MOUNT). */
const execdStaging = "/paddock-execd";
/** Room for the execd files (Node, its libraries, tini, busybox: well under this). */
const execdVolumeSize = "512Mi";

/** Keys of the per-sandbox Secret. */
export const tokenKeys = { execd: "execd-token", egress: "egress-token" } as const;

/** Destinations no sandbox may reach: private, carrier-grade NAT and link-local (metadata) ranges. */
export const blockedEgressRanges = [
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "100.64.0.0/10",
  "169.254.0.0/16",
];

/** The names of the objects that make up one sandbox. */
export function objectNames(sandboxId: string) {
  return {
    pod: sandboxId,
    tokens: `${sandboxId}-tokens`,
    pull: `${sandboxId}-pull`,
    paused: `${sandboxId}-paused`,
  };
}

/** What every sandbox pod of this server shares, resolved once from the configuration. */
export interface PodContext {
  namespace: string;
  instance: string;
  execdImage: string;
  egressImage: string;
  /** Resolver for the egress sidecar; empty = the pod's own (cluster DNS). */
  egressUpstreamDns: string;
  runtimeClassName: string;
  /** Cluster-wide pull secret (for snapshot images); empty = none. */
  imagePullSecret: string;
}

/**
 * The sandbox pod: an init container copies execd out of its image into an emptyDir that the
 * sandbox container mounts read-only at EXECD_MOUNT, so the user's image stays untouched; the
 * tokens come from the sandbox's Secret, never inline.
 */
export function sandboxPod(context: PodContext, spec: WorkloadSpec, options: { pullSecret: boolean }): V1Pod {
  const names = objectNames(spec.sandboxId);
  const split = splitLabels(spec.labels);
  const env: V1EnvVar[] = Object.entries(stashNodeVariables(spec.env)).map(([name, value]) => ({
    name,
    value,
  }));
  env.push(secretEnv(EXECD_TOKEN_ENV, names.tokens, tokenKeys.execd));
  if (spec.networkPolicy) env.push({ name: EXECD_WAIT_EGRESS_ENV, value: "1" });
  if (spec.cpuMillis) env.push({ name: EXECD_CPU_LIMIT_ENV, value: String(spec.cpuMillis / 1000) });
  const userVolumes = spec.volumes.map((volume, index) => ({ volume, name: `volume-${index}` }));
  const pullSecrets = [
    ...(options.pullSecret ? [names.pull] : []),
    ...(context.imagePullSecret ? [context.imagePullSecret] : []),
  ];
  const containers: V1Container[] = [
    {
      name: sandboxContainer,
      image: spec.image,
      command: execdEntrypoint(spec.entrypoint),
      args: [],
      env,
      resources: resourcesOf(spec),
      securityContext: hardened(sandboxCapabilities),
      volumeMounts: [
        { name: execdVolume, mountPath: EXECD_MOUNT, readOnly: true },
        ...userVolumes.map(
          ({ volume, name }): V1VolumeMount => ({
            name,
            mountPath: volume.mountPath,
            readOnly: volume.readOnly ?? false,
            ...(volume.subPath ? { subPath: volume.subPath } : {}),
          }),
        ),
      ],
    },
  ];
  if (spec.networkPolicy) containers.push(egressSidecar(context, spec, names.tokens));
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: names.pod,
      namespace: context.namespace,
      labels: { ...split.labels, ...ownLabels(context.instance, "sandbox", spec.sandboxId) },
      annotations: split.annotations,
    },
    spec: {
      hostname: spec.sandboxId.slice(0, 63),
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      securityContext: { seccompProfile: { type: "RuntimeDefault" } },
      ...(context.runtimeClassName ? { runtimeClassName: context.runtimeClassName } : {}),
      ...(pullSecrets.length ? { imagePullSecrets: pullSecrets.map((name) => ({ name })) } : {}),
      initContainers: [
        {
          name: execdInitContainer,
          image: context.execdImage,
          // The execd image is FROM scratch: its own static busybox does the copy.
          command: [`${EXECD_MOUNT}/bin/busybox`, "cp", "-R", `${EXECD_MOUNT}/.`, `${execdStaging}/`],
          securityContext: { ...hardened([]), readOnlyRootFilesystem: true },
          resources: {
            requests: { cpu: "100m", memory: "64Mi" },
            limits: { cpu: "500m", memory: "64Mi" },
          },
          volumeMounts: [{ name: execdVolume, mountPath: execdStaging }],
        },
      ],
      containers,
      volumes: [
        { name: execdVolume, emptyDir: { sizeLimit: execdVolumeSize } },
        ...userVolumes.map(({ volume, name }): V1Volume => {
          if (volume.host) return { name, hostPath: { path: volume.host.path, type: "Directory" } };
          // Read-only on the volume itself: the node mounts the claim read-only, not only the container.
          if (volume.pvc)
            return {
              name,
              persistentVolumeClaim: {
                claimName: volume.pvc.claimName,
                ...(volume.readOnly ? { readOnly: true } : {}),
              },
            };
          throw new Error(`volume ${volume.name} has no backend this runtime supports`);
        }),
      ],
    },
  };
}

function egressSidecar(context: PodContext, spec: WorkloadSpec, tokensSecret: string): V1Container {
  return {
    name: egressContainer,
    image: context.egressImage,
    env: [
      secretEnv(EGRESS_TOKEN_ENV, tokensSecret, tokenKeys.egress),
      { name: EGRESS_POLICY_ENV, value: JSON.stringify(spec.networkPolicy) },
      ...(context.egressUpstreamDns
        ? [{ name: EGRESS_UPSTREAM_DNS_ENV, value: context.egressUpstreamDns }]
        : []),
    ],
    securityContext: hardened(["NET_ADMIN"]),
    resources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "128Mi" } },
  };
}

function secretEnv(name: string, secret: string, key: string): V1EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: secret, key } } };
}

function hardened(capabilities: string[]): V1SecurityContext {
  return {
    capabilities: { drop: ["ALL"], ...(capabilities.length ? { add: capabilities } : {}) },
    allowPrivilegeEscalation: false,
    privileged: false,
  };
}

/** Limits as the Docker runtime sets them; requests equal, so the scheduler places what will run. */
export function resourcesOf(spec: WorkloadSpec): V1ResourceRequirements {
  const quantities: Record<string, string> = {};
  if (spec.cpuMillis) quantities.cpu = `${spec.cpuMillis}m`;
  if (spec.memoryBytes) quantities.memory = String(spec.memoryBytes);
  if (spec.diskBytes) quantities["ephemeral-storage"] = String(spec.diskBytes);
  if (spec.gpus) quantities["nvidia.com/gpu"] = String(spec.gpus);
  return { limits: quantities, requests: { ...quantities } };
}

/** The per-sandbox Secret holding its tokens (owned by its pod once the pod exists). */
export function tokenSecret(
  context: Pick<PodContext, "namespace" | "instance">,
  spec: Pick<WorkloadSpec, "sandboxId" | "execdToken" | "egressToken">,
): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: objectNames(spec.sandboxId).tokens,
      namespace: context.namespace,
      labels: ownLabels(context.instance, "sandbox", spec.sandboxId),
    },
    type: "Opaque",
    stringData: { [tokenKeys.execd]: spec.execdToken, [tokenKeys.egress]: spec.egressToken },
  };
}

/** A dockerconfigjson Secret with the credentials a create gave for its image. */
export function pullSecret(
  context: Pick<PodContext, "namespace" | "instance">,
  sandboxId: string,
  image: string,
  auth: RegistryAuth,
): V1Secret {
  const registry = registryOf(image);
  const username = auth.username ?? "";
  const password = auth.password ?? "";
  const auths = {
    [registry]: { username, password, auth: Buffer.from(`${username}:${password}`).toString("base64") },
  };
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: objectNames(sandboxId).pull,
      namespace: context.namespace,
      labels: ownLabels(context.instance, "sandbox", sandboxId),
    },
    type: "kubernetes.io/dockerconfigjson",
    stringData: { ".dockerconfigjson": JSON.stringify({ auths }) },
  };
}

/** The registry host of an image reference, as Docker's credential files name it. */
export function registryOf(image: string): string {
  const first = image.split("/")[0] ?? "";
  return image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost")
    ? first
    : "https://index.docker.io/v1/";
}

export interface NetworkPolicyOptions {
  namespace: string;
  instance: string;
  serverPodSelector: string;
  serverNamespaceSelector: string;
  serverCidrs: string[];
  clusterCidrs: string[];
}

/** A NetworkPolicy as the API spells it (the client's model calls an ingress rule's `from` `_from`). */
export type WireNetworkPolicy = Omit<V1NetworkPolicy, "spec"> & {
  spec: Omit<V1NetworkPolicySpec, "ingress"> & {
    ingress: Array<{ from: V1NetworkPolicyPeer[]; ports?: V1NetworkPolicyPort[] }>;
  };
};

/** The policy in the client's model, whose serializer writes `_from` out as `from`. */
export function toClientNetworkPolicy(policy: WireNetworkPolicy): V1NetworkPolicy {
  return {
    ...policy,
    spec: {
      ...policy.spec,
      ingress: policy.spec.ingress.map(({ from, ...rule }) => ({ ...rule, _from: from })),
    },
  };
}

/**
 * Sandboxes accept connections only from the Paddock server (its pods by label, or its
 * addresses when it runs outside the cluster) and connect only to the public internet and
 * cluster DNS: never to each other, to cluster services, or to private and metadata addresses.
 */
export function sandboxNetworkPolicy(options: NetworkPolicyOptions): WireNetworkPolicy {
  const serverPods = parseSelector(options.serverPodSelector);
  const serverNamespaces = parseSelector(options.serverNamespaceSelector);
  const from = [
    ...(Object.keys(serverPods).length
      ? [
          {
            podSelector: { matchLabels: serverPods },
            ...(Object.keys(serverNamespaces).length
              ? { namespaceSelector: { matchLabels: serverNamespaces } }
              : {}),
          },
        ]
      : []),
    ...options.serverCidrs.map((cidr) => ({ ipBlock: { cidr } })),
  ];
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: `paddock-sandboxes-${options.instance}`,
      namespace: options.namespace,
      labels: { "paddock.managed": "true", "paddock.instance": options.instance },
    },
    spec: {
      podSelector: {
        matchLabels: {
          "paddock.managed": "true",
          "paddock.instance": options.instance,
          "paddock.role": "sandbox",
        },
      },
      policyTypes: ["Ingress", "Egress"],
      // No peers at all: the rule list stays empty and every connection in is refused.
      ingress: from.length ? [{ from }] : [],
      egress: [
        {
          to: [{ ipBlock: { cidr: "0.0.0.0/0", except: [...blockedEgressRanges, ...options.clusterCidrs] } }],
        },
        {
          to: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
              podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
            },
          ],
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
      ],
    },
  };
}

/**
 * Remembers a paused sandbox: its pod as it will be recreated (from the pause image, without
 * what the cluster filled in). The sandbox's Secrets are owned by this ConfigMap while it exists.
 */
export function pausedConfigMap(
  context: Pick<PodContext, "namespace" | "instance">,
  pod: V1Pod,
): V1ConfigMap {
  const sandboxId = pod.metadata?.name ?? "";
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: objectNames(sandboxId).paused,
      namespace: context.namespace,
      labels: ownLabels(context.instance, "paused", sandboxId),
    },
    data: { pod: JSON.stringify(pod) },
  };
}

/** The running pod as a create request again, its sandbox container on `image`. */
export function resumablePod(pod: V1Pod, image: string): V1Pod {
  const spec = structuredClone(pod.spec);
  if (!spec) throw new Error("pod has no spec");
  delete spec.nodeName;
  for (const container of spec.containers) if (container.name === sandboxContainer) container.image = image;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: pod.metadata?.name ?? "",
      namespace: pod.metadata?.namespace ?? "",
      labels: pod.metadata?.labels ?? {},
      annotations: pod.metadata?.annotations ?? {},
    },
    spec,
  };
}

export interface SnapshotJobOptions {
  namespace: string;
  instance: string;
  name: string;
  sandboxId: string;
  nodeName: string;
  /** containerd's id of the sandbox container. */
  containerId: string;
  imageRef: string;
  snapshotImage: string;
  containerdSocket: string;
  /** dockerconfigjson Secret for pushing; empty = none. */
  pushSecret: string;
  timeoutSeconds: number;
}

/** The Job's script: commit the container to an image, push it, drop the node's copy. */
const commitScript = [
  "set -e",
  'nerdctl --namespace k8s.io commit "$PADDOCK_CONTAINER_ID" "$PADDOCK_IMAGE_REF"',
  'nerdctl --namespace k8s.io push "$PADDOCK_IMAGE_REF"',
  // The node keeps no copy: sandboxes made from it pull it like any image.
  'nerdctl --namespace k8s.io rmi "$PADDOCK_IMAGE_REF" || true',
].join("\n");

/**
 * Kubernetes has no container commit: a privileged Job on the sandbox's node asks the node's
 * containerd to commit the sandbox container and push the image to the snapshot registry.
 */
export function snapshotJob(options: SnapshotJobOptions): V1Job {
  const labels = ownLabels(options.instance, "snapshot", options.sandboxId);
  const dockerConfig = "/paddock/docker-config";
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: options.name, namespace: options.namespace, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: options.timeoutSeconds,
      // A safety net for a server that died while waiting; the runtime deletes the Job itself.
      ttlSecondsAfterFinished: 600,
      template: {
        metadata: { labels },
        spec: {
          nodeName: options.nodeName,
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          tolerations: [{ operator: "Exists" }],
          ...(options.pushSecret ? { imagePullSecrets: [{ name: options.pushSecret }] } : {}),
          containers: [
            {
              name: "commit",
              image: options.snapshotImage,
              command: ["sh", "-c", commitScript],
              env: [
                { name: "PADDOCK_CONTAINER_ID", value: options.containerId },
                { name: "PADDOCK_IMAGE_REF", value: options.imageRef },
                ...(options.pushSecret ? [{ name: "DOCKER_CONFIG", value: dockerConfig }] : []),
              ],
              securityContext: { privileged: true },
              volumeMounts: [
                { name: "containerd", mountPath: "/run/containerd/containerd.sock" },
                ...(options.pushSecret
                  ? [{ name: "push-secret", mountPath: dockerConfig, readOnly: true }]
                  : []),
              ],
            },
          ],
          volumes: [
            { name: "containerd", hostPath: { path: options.containerdSocket, type: "Socket" } },
            ...(options.pushSecret
              ? [
                  {
                    name: "push-secret",
                    secret: {
                      secretName: options.pushSecret,
                      items: [{ key: ".dockerconfigjson", path: "config.json" }],
                    },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}

/** "May this service account `verb` `resource` in `namespace`?" */
export function accessReview(
  namespace: string,
  rule: { group: string; resource: string; subresource?: string; verb: string },
): V1SelfSubjectAccessReview {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: {
      resourceAttributes: {
        namespace,
        group: rule.group,
        resource: rule.resource,
        verb: rule.verb,
        ...(rule.subresource ? { subresource: rule.subresource } : {}),
      },
    },
  };
}
