import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { ErrorBody, errorResponses } from "../../http/error-schemas.js";
import { BoundedOutput } from "../command-output.js";
import { clientGone, type ExecdRouteOptions, execdRoutes } from "../execd-client.js";
import { CodeRequest, CodeResult, Context, ContextRequest } from "../schemas/files.js";
import { SandboxParams } from "../schemas/sandboxes.js";

/**
 * Stateful code through execd: contexts keep their state between runs. A run without a context
 * goes to the sandbox's default context of its language (kept by execd), so `x = 20` then
 * `x + 22` works; a caller who wants a clean slate creates a context.
 */
export const codeRoutes: FastifyPluginAsyncTypebox<ExecdRouteOptions> = async (app, options) => {
  // Every call here runs code in the sandbox: counted as a command.
  const execdFor = execdRoutes(app, options, "commands");

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
      const context = await execd.createCodeContext(request.body.language ?? "python");
      return reply.status(201).send({ id: context.id, language: context.language });
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
      const context = contextId ? { id: contextId } : { language: language ?? "python" };
      const output = new BoundedOutput();
      let error: { name: string; value: string; traceback: string[] } | null = null;
      let executionCount: number | null = null;
      // A client that leaves closes execd's stream, which interrupts the cell.
      for await (const event of execd.runCode(code, context, clientGone(reply))) {
        // Kept up to /run's bound; the rest is read (to learn how the cell ended) and dropped.
        if (event.type === "stdout" || event.type === "stderr")
          await output.add(event.type, String(event.text ?? ""));
        else if (event.type === "result") await output.addResult(event.results ?? {});
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
      const { stdout, stderr, results, truncated } = output;
      return { stdout, stderr, results, error, executionCount, ...(truncated ? { truncated } : {}) };
    },
  );
};
