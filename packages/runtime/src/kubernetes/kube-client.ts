import {
  ApiException,
  AuthorizationV1Api,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  NodeV1Api,
} from "@kubernetes/client-node";
import type { PaddockConfig } from "@paddock/common";
import { RuntimeStartError } from "../runtime.js";

/** The API groups this runtime calls, made from one kubeconfig. */
export interface KubeClient {
  config: KubeConfig;
  /** The API server's address, for messages. */
  server: string;
  core: CoreV1Api;
  batch: BatchV1Api;
  networking: NetworkingV1Api;
  node: NodeV1Api;
  authorization: AuthorizationV1Api;
}

/**
 * `kubernetes.kubeconfig` when set; otherwise the client's usual search: $KUBECONFIG,
 * ~/.kube/config, then the pod's service account (a server running in the cluster).
 */
export function openKubeClient(config: PaddockConfig["kubernetes"]): KubeClient {
  const kubeConfig = new KubeConfig();
  try {
    if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (error) {
    throw new RuntimeStartError(
      `cannot load the Kubernetes configuration${config.kubeconfig ? ` from ${config.kubeconfig}` : ""}: ${(error as Error).message}; set kubernetes.kubeconfig or run the server in the cluster`,
    );
  }
  const server = kubeConfig.getCurrentCluster()?.server ?? "";
  if (!server) {
    throw new RuntimeStartError("the Kubernetes configuration names no cluster; set kubernetes.kubeconfig");
  }
  return {
    config: kubeConfig,
    server,
    core: kubeConfig.makeApiClient(CoreV1Api),
    batch: kubeConfig.makeApiClient(BatchV1Api),
    networking: kubeConfig.makeApiClient(NetworkingV1Api),
    node: kubeConfig.makeApiClient(NodeV1Api),
    authorization: kubeConfig.makeApiClient(AuthorizationV1Api),
  };
}

/** The HTTP status of a failed API call; undefined when nothing answered. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** The API server's own words (the Status object's message) for a failed call. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiException) {
    const body = error.body as unknown;
    try {
      const status = (typeof body === "string" ? JSON.parse(body) : body) as { message?: string };
      if (status?.message) return `${status.message} (HTTP ${error.code})`;
    } catch {
      // Not a Status object.
    }
    return `HTTP ${error.code}`;
  }
  return (error as Error)?.message ?? String(error);
}

/** Runs `call`, answering undefined when the object is not there. */
export async function unlessNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}
