import { RuntimeStartError } from "../runtime.js";
import { type KubeClient, messageOf, statusOf } from "./kube-client.js";
import { accessReview } from "./manifests.js";

export interface AccessRule {
  group: string;
  resource: string;
  subresource?: string;
  verbs: string[];
}

/** Exactly what the runtime calls in its namespace (deploy/kubernetes/rbac.yaml grants the same). */
export function requiredRules(options: { snapshots: boolean }): AccessRule[] {
  return [
    { group: "", resource: "pods", verbs: ["create", "delete", "get", "list", "watch"] },
    { group: "", resource: "pods", subresource: "log", verbs: ["get"] },
    { group: "", resource: "secrets", verbs: ["create", "delete", "patch"] },
    { group: "", resource: "configmaps", verbs: ["create", "delete", "get", "list"] },
    { group: "networking.k8s.io", resource: "networkpolicies", verbs: ["create", "get", "update"] },
    ...(options.snapshots ? [{ group: "batch", resource: "jobs", verbs: ["create", "delete", "get"] }] : []),
  ];
}

/** How a rule reads in a Role's `rules:` list. */
export function roleRule(rule: AccessRule): string {
  const resource = rule.subresource ? `${rule.resource}/${rule.subresource}` : rule.resource;
  return `{apiGroups: ["${rule.group}"], resources: ["${resource}"], verbs: [${rule.verbs.map((verb) => `"${verb}"`).join(", ")}]}`;
}

/**
 * Asks the API server, one SelfSubjectAccessReview per verb and resource, whether this server's
 * identity may do what the runtime does; refuses to start with the Role rules that are missing.
 */
export async function checkAccess(client: KubeClient, namespace: string, rules: AccessRule[]): Promise<void> {
  const checks = rules.flatMap((rule) => rule.verbs.map((verb) => ({ rule, verb })));
  const answers = await Promise.all(
    checks.map(async ({ rule, verb }) => {
      try {
        const review = await client.authorization.createSelfSubjectAccessReview({
          body: accessReview(namespace, { ...rule, verb }),
        });
        return review.status?.allowed === true;
      } catch (error) {
        if (statusOf(error) === undefined) {
          throw new RuntimeStartError(
            `cannot reach the Kubernetes API server at ${client.server} (${messageOf(error)}); check kubernetes.kubeconfig`,
          );
        }
        throw new RuntimeStartError(
          `the Kubernetes API server refused an access review: ${messageOf(error)}`,
        );
      }
    }),
  );
  const missing = new Map<AccessRule, string[]>();
  checks.forEach(({ rule, verb }, index) => {
    if (!answers[index]) missing.set(rule, [...(missing.get(rule) ?? []), verb]);
  });
  if (missing.size === 0) return;
  const lines = [...missing].map(([rule, verbs]) => roleRule({ ...rule, verbs }));
  throw new RuntimeStartError(
    `the Kubernetes identity of this server lacks permissions in namespace ${namespace}; add to its Role (see deploy/kubernetes/rbac.yaml) the rules: ${lines.join("; ")}`,
  );
}

/** Whether the RuntimeClass exists (a cluster-scoped read, granted by a ClusterRole). */
export async function runtimeClassExists(client: KubeClient, name: string): Promise<boolean> {
  try {
    await client.node.readRuntimeClass({ name });
    return true;
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return false;
    if (status === 403) {
      throw new RuntimeStartError(
        `the Kubernetes identity of this server may not read RuntimeClass ${name}; bind it a ClusterRole with the rule {apiGroups: ["node.k8s.io"], resources: ["runtimeclasses"], verbs: ["get"]} (see deploy/kubernetes/rbac.yaml)`,
      );
    }
    throw new RuntimeStartError(
      `cannot read RuntimeClass ${name} from ${client.server}: ${messageOf(error)}`,
    );
  }
}
