import { EGRESS_PORT, EGRESS_TOKEN_HEADER, Errors, PaddockError } from "@paddock/common";
import type { NetworkPolicy } from "./model.js";
import type { SandboxOperations } from "./sandbox-operations.js";

/** What a sandbox's egress sidecar enforces now. */
export interface EnforcedPolicy {
  mode: "allow_all" | "deny_all" | "enforcing";
  /** In canonical form: the sidecar always states both. */
  policy: Required<NetworkPolicy>;
}

/**
 * Reads or changes the live policy of a sandbox that has an egress sidecar, with the sandbox's
 * token kept server-side: GET reads it, PUT replaces it, PATCH merges rules in, DELETE removes
 * rules by target. The sidecar's refusals come back as registry errors, a 400's field named from
 * `sentAt`, where the caller's own request held what is sent as the sidecar's body. Callers check
 * first that the sandbox was created with a policy (without one it has no sidecar).
 */
export async function callEgressPolicy(
  sandboxes: SandboxOperations,
  sandbox: { id: string },
  owner: string | null | undefined,
  method: "GET" | "PUT" | "PATCH" | "DELETE",
  body?: unknown,
  sentAt = "body",
): Promise<EnforcedPolicy> {
  const { host, port } = await sandboxes.target(sandbox.id, EGRESS_PORT, owner);
  const response = await fetch(`http://${host}:${port}/policy`, {
    method,
    headers: {
      [EGRESS_TOKEN_HEADER]: sandboxes.tokens(sandbox.id).egress,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  }).catch((error: Error) => {
    throw new PaddockError(
      Errors.endpointUnavailable,
      `the sandbox's egress sidecar did not answer (${error.message}); it restarts by itself and egress stays denied meanwhile`,
    );
  });
  const answer = (await response.json().catch(() => ({}))) as Partial<EnforcedPolicy> & { message?: unknown };
  if (!response.ok) {
    const message =
      typeof answer.message === "string" ? answer.message : `the sidecar answered ${response.status}`;
    if (response.status === 400)
      throw new PaddockError(Errors.invalidRequest, message.replace(/^body(?=[.[:])/, sentAt));
    if (response.status === 413) throw new PaddockError(Errors.payloadTooLarge, message);
    throw new PaddockError(Errors.endpointUnavailable, message);
  }
  return { mode: answer.mode, policy: answer.policy } as EnforcedPolicy;
}
