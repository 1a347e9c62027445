import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import type { AccountLimits } from "../plans/account-limits.js";
import { SandboxUsageList, SandboxUsageQuery, UsageSummary } from "./schemas.js";
import type { Usage } from "./usage.js";

/** Usage of the current period: account routes (sessions and unscoped keys only). */
export const usageRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  usage: Usage;
  limits: AccountLimits;
}> = async (app, { identity, usage, limits }) => {
  app.addHook("onRequest", authenticate(identity, null));

  app.get(
    "/usage",
    {
      schema: {
        tags: ["usage"],
        description:
          "Sandbox minutes used in the current calendar month (UTC), against what the account's plan includes; the plan's default idle policy; resumes.",
        response: { 200: UsageSummary, ...errorResponses },
      },
    },
    async (request) => {
      const accountId = principalOf(request).accountId;
      const summary = await usage.summary(accountId);
      return { ...summary, plan: { ...summary.plan, lifecycle: await limits.lifecycleDefaults(accountId) } };
    },
  );

  app.get(
    "/usage/sandboxes",
    {
      schema: {
        tags: ["usage"],
        description:
          "Minutes per sandbox in the current calendar month (UTC), newest first; deleted sandboxes stay listed.",
        querystring: SandboxUsageQuery,
        response: { 200: SandboxUsageList, ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, pageSize = 20 } = request.query;
      return usage.sandboxPage(principalOf(request).accountId, page, pageSize);
    },
  );
};
