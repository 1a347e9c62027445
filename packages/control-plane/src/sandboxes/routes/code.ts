import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { EXECD_DEFAULT_CODE_CONTEXT } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import type { FastifyRequest } from "fastify";
import { authenticate } from "../../http/auth-hook.js";
import { ErrorBody, errorResponses } from "../../http/error-schemas.js";
import type { Identity } from "../../identity/identity.js";
import type { AccountLimits } from "../../plans/account-limits.js";
import { BoundedOutput } from "../command-output.js";
import { checked, clientGone, ExecdClient } from "../execd-client.js";
import { CodeRequest, CodeResult, Context, ContextRequest } from "../schemas/files.js";
import { SandboxParams } from "../schemas/sandboxes.js";

/**
 * Stateful code through execd: contexts keep their state between runs. A run without a context
 * goes to the sandbox's default context of its language (kept by execd), so `x = 20` then
 * `x + 22` works; a caller who wants a clean slate creates a context.
 */
export const codeRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  sandboxes: SandboxOperations;
  limits: AccountLimits;
}> = async (app, options) => {
  app.addHook("onRequest", authenticate(options.identity, "sandboxes"));
  // Every call here runs code in the sandbox: counted as a command.
  app.addHook("onRequest", options.limits.hook("commands"));
  const execdFor = (request: FastifyRequest & { params: { id: string } }) =>
    ExecdClient.forRequest(options.sandboxes, request);

  app.post(
    "/sandboxes/:id/code/contexts",
    {
      schema: {
        tags: ["code"],
        params: SandboxParams,
        body: ContextRequest,
        response: { 201: Context, ...errorResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const execd = await execdFor(request);
      const response = await checked(
        await execd.request("/code/context", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ language: request.body.language ?? "python" }),
        }),
      );
      const body = (await response.json()) as { id: string; language: string };
      return reply.status(201).send({ id: body.id, language: body.language });
    },
  );

  app.post(
    "/sandboxes/:id/code",
    {
      schema: {
        tags: ["code"],
        params: SandboxParams,
        body: CodeRequest,
        response: { 200: CodeResult, ...errorResponses, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const execd = await execdFor(request);
      const { code, language, contextId } = request.body;
      const context = contextId
        ? { id: contextId }
        : { id: EXECD_DEFAULT_CODE_CONTEXT, language: language ?? "python" };
      const output = new BoundedOutput();
      const results: Array<Record<string, unknown>> = [];
      let error: { name: string; value: string; traceback: string[] } | null = null;
      let executionCount: number | null = null;
      // A client that leaves closes execd's stream, which interrupts the cell.
      for await (const event of execd.events("/code", { context, code }, clientGone(reply))) {
        // Kept up to /run's bound; the rest is read (to learn how the cell ended) and dropped.
        if (event.type === "stdout" || event.type === "stderr")
          await output.add(event.type, String(event.text ?? ""));
        else if (event.type === "result") results.push((event.results as Record<string, unknown>) ?? {});
        else if (event.type === "execution_count") executionCount = Number(event.execution_count);
        else if (event.type === "error") {
          const detail = (event.error ?? {}) as { ename?: string; evalue?: string; traceback?: string[] };
          error = {
            name: detail.ename ?? "Error",
            value: detail.evalue ?? "",
            traceback: detail.traceback ?? [],
          };
        }
      }
      const { stdout, stderr, truncated } = output;
      return { stdout, stderr, results, error, executionCount, ...(truncated ? { truncated } : {}) };
    },
  );
};
