import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AuditTrail } from "../audit/audit-trail.js";
import { principalOf } from "../http/auth-hook.js";
import { deletedResponses, ErrorBody, errorResponses } from "../http/error-schemas.js";
import type { AgentKeys } from "../identity/agent-keys.js";
import type { Identity } from "../identity/identity.js";
import type { PaymentCredentials as CredentialStore } from "./payment-credentials.js";
import { authenticatePaymentOwner } from "./payments-auth.js";
import {
  AgentKey,
  AgentKeyRequest,
  AgentKeyWithSecret,
  PaymentCredentials,
  SetCredentialsRequest,
} from "./schemas.js";

/** The owner's side of payments: the stored provider key and the agent key (never an agent's). */
export const paymentRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  credentials: CredentialStore;
  agentKeys: AgentKeys;
  audit: AuditTrail;
}> = async (app, { identity, credentials, agentKeys, audit }) => {
  const target = { type: "payment_credentials", name: "stripe" };
  app.addHook("onRequest", authenticatePaymentOwner(identity));

  app.put(
    "/payments/credentials",
    {
      schema: {
        tags: ["payments"],
        description:
          "Stores the account's own Stripe secret key after Stripe accepts it (a balance read), replacing any earlier one. It is kept encrypted and only its masked form is ever returned.",
        body: SetCredentialsRequest,
        response: { 200: PaymentCredentials, ...errorResponses, 502: ErrorBody },
      },
    },
    async (request) => {
      const info = await credentials.set(principalOf(request).accountId, request.body.secretKey);
      await audit.record(request, principalOf(request), "payments.credentials_set", target);
      return info;
    },
  );

  app.get(
    "/payments/credentials",
    {
      schema: {
        tags: ["payments"],
        description: "The stored key, masked.",
        response: { 200: PaymentCredentials, ...errorResponses },
      },
    },
    async (request) => credentials.get(principalOf(request).accountId),
  );

  app.delete(
    "/payments/credentials",
    {
      schema: {
        tags: ["payments"],
        description:
          "Forgets the stored key; payment operations then answer 409 payments_not_connected. The agent key stays (and works again once a key is stored).",
        response: deletedResponses,
      },
    },
    async (request, reply) => {
      await credentials.delete(principalOf(request).accountId);
      await audit.record(request, principalOf(request), "payments.credentials_deleted", target);
      return reply.status(204).send(undefined as never);
    },
  );

  app.get(
    "/payments/agent-key",
    {
      schema: {
        tags: ["payments"],
        description: "The agent key's prefix, limits and running total (never the key).",
        response: { 200: AgentKey, ...errorResponses },
      },
    },
    async (request) => agentKeys.get(principalOf(request).accountId),
  );

  app.post(
    "/payments/agent-key",
    {
      schema: {
        tags: ["payments"],
        description:
          "Issues the account's payments agent key with these limits, shown once. An existing agent key is replaced: it stops working at once and the running total starts from zero.",
        body: AgentKeyRequest,
        response: { 201: AgentKeyWithSecret, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { allowedOperations, currency, maxAmount, totalLimit = null } = request.body;
      const { key, info } = await agentKeys.issue(principalOf(request).accountId, {
        allowedOperations,
        currency,
        maxAmount,
        totalLimit,
      });
      await audit.record(request, principalOf(request), "payments.agent_key_issued", {
        type: "payment_agent_key",
        name: "agent",
      });
      return reply.status(201).send({ ...info, key });
    },
  );

  app.delete(
    "/payments/agent-key",
    {
      schema: {
        tags: ["payments"],
        description: "Revokes the agent key at once.",
        response: deletedResponses,
      },
    },
    async (request, reply) => {
      await agentKeys.revoke(principalOf(request).accountId);
      await audit.record(request, principalOf(request), "payments.agent_key_revoked", {
        type: "payment_agent_key",
        name: "agent",
      });
      return reply.status(204).send(undefined as never);
    },
  );
};
