import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "@paddock/common";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { RuntimeClass } from "kubernetes-models/node.k8s.io/v1/RuntimeClass";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { describe, expect, test } from "vitest";
import { parseAllDocuments } from "yaml";
import { requiredRules } from "../src/kubernetes/access-checks.js";
import { sandboxNetworkPolicy } from "../src/kubernetes/manifests.js";

const directory = fileURLToPath(new URL("../../../deploy/kubernetes/", import.meta.url));
const models: Record<string, new (data: never) => { validate(): void }> = {
  Namespace,
  ServiceAccount,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
  RuntimeClass,
  ConfigMap,
  Deployment,
  Service,
};

type Manifest = Record<string, any>;

const manifests: Manifest[] = readdirSync(directory)
  .filter((file) => file.endsWith(".yaml"))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(join(directory, file), "utf8")).map((d) => d.toJS() as Manifest),
  );

function find(kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata?.name === name);
  if (!found) throw new Error(`deploy/kubernetes has no ${kind} ${name}`);
  return found;
}

describe("deploy/kubernetes", () => {
  test("every manifest passes Kubernetes' published schema", () => {
    expect(manifests.length).toBeGreaterThanOrEqual(10);
    for (const manifest of manifests) {
      const Model = models[manifest.kind];
      if (!Model) throw new Error(`no schema check for ${manifest.kind}`);
      expect(
        () => new Model(manifest as never).validate(),
        `${manifest.kind} ${manifest.metadata?.name}`,
      ).not.toThrow();
    }
  });

  test("the Role grants exactly what the runtime checks for, and the gVisor RuntimeClass uses runsc", () => {
    const granted = find("Role", "paddock-runtime").rules.map((rule: Manifest) => ({
      group: rule.apiGroups[0],
      resource: rule.resources[0],
      verbs: rule.verbs,
    }));
    const needed = requiredRules({ snapshots: true }).map((rule) => ({
      group: rule.group,
      resource: rule.subresource ? `${rule.resource}/${rule.subresource}` : rule.resource,
      verbs: rule.verbs,
    }));
    expect(granted).toEqual(needed);
    expect(find("ClusterRole", "paddock-runtimeclass-reader").rules).toEqual([
      { apiGroups: ["node.k8s.io"], resources: ["runtimeclasses"], verbs: ["get"] },
    ]);
    expect(find("RuntimeClass", "gvisor").handler).toBe("runsc");
  });

  test("the server's config loads, and the NetworkPolicy it yields selects the Deployment's pods", () => {
    const temp = mkdtempSync(join(tmpdir(), "paddock-deploy-"));
    try {
      const file = join(temp, "paddock.toml");
      writeFileSync(file, find("ConfigMap", "paddock-config").data["paddock.toml"]);
      const config = loadConfig({ file, env: {} });
      expect(config.runtime.type).toBe("kubernetes");
      const deployment = find("Deployment", "paddock");
      const policy = sandboxNetworkPolicy({
        namespace: config.kubernetes.namespace,
        instance: config.server.instance,
        serverPodSelector: config.kubernetes.server_pod_selector,
        serverNamespaceSelector: config.kubernetes.server_namespace_selector,
        serverCidrs: config.kubernetes.server_cidrs,
        clusterCidrs: config.kubernetes.cluster_cidrs,
      });
      const peer = policy.spec.ingress[0]?.from[0];
      expect(deployment.spec.template.metadata.labels).toMatchObject(
        peer?.podSelector?.matchLabels ?? { missing: true },
      );
      expect(peer?.namespaceSelector?.matchLabels).toEqual({
        "kubernetes.io/metadata.name": deployment.metadata.namespace,
      });
      const binding = find("RoleBinding", "paddock-runtime");
      expect(binding.metadata.namespace).toBe(config.kubernetes.namespace);
      expect(binding.subjects[0]).toMatchObject({
        name: deployment.spec.template.spec.serviceAccountName,
        namespace: deployment.metadata.namespace,
      });
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  });
});

test("every manifest the runtime's messages point to exists", () => {
  const sources = fileURLToPath(new URL("../src/kubernetes/", import.meta.url));
  const named = readdirSync(sources).flatMap((file) => [
    ...readFileSync(join(sources, file), "utf8").matchAll(/deploy\/kubernetes\/([\w.-]+\.yaml)/g),
  ]);
  expect(named.length).toBeGreaterThan(0);
  const present = readdirSync(directory);
  for (const [, file] of named) expect(present, `deploy/kubernetes/${file}`).toContain(file);
});
