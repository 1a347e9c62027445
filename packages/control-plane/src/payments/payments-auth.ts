import { PaddockError } from "@paddock/common";
import type { FastifyReply, FastifyRequest } from "fastify";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { ControlPlaneErrors } from "../http/errors.js";
import { type AgentKeys, agentKeyPrefix, type PaymentAgent } from "../identity/agent-keys.js";
import type { Identity } from "../identity/identity.js";
import type { PaymentActor } from "./payment-operations.js";

declare module "fastify" {
  interface FastifyRequest {
    paymentAgent?: PaymentAgent;
  }
}

const agentBearer = new RegExp(`^Bearer\\s+(${agentKeyPrefix}\\S+)$`, "i");

function agentTokenOf(request: FastifyRequest): string | undefined {
  return agentBearer.exec(request.headers.authorization ?? "")?.[1];
}

/**
 * The /payments operations take the account's own credentials (a session or an unscoped key,
 * as for billing) or its payments agent key (`Bearer pak_…`), whose limits then apply.
 */
export function authenticatePaymentActor(identity: Identity, agentKeys: AgentKeys) {
  const asOwner = authenticate(identity, null);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const token = agentTokenOf(request);
    if (token) request.paymentAgent = await agentKeys.authenticate(token);
    else await asOwner(request, reply);
  };
}

export function paymentActorOf(request: FastifyRequest): PaymentActor {
  if (request.paymentAgent) return { accountId: request.paymentAgent.accountId, agent: request.paymentAgent };
  return { accountId: principalOf(request).accountId, agent: null };
}

/** Credentials and the agent key itself are the owner's: an agent key is refused there. */
export function authenticatePaymentOwner(identity: Identity) {
  const asOwner = authenticate(identity, null);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (agentTokenOf(request)) {
      throw new PaddockError(
        ControlPlaneErrors.agentKeyForbidden,
        "a payments agent key cannot manage credentials or agent keys; use the account's session or an unscoped API key",
      );
    }
    await asOwner(request, reply);
  };
}
