import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Errors, PaddockError, type SseEvent } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import { authenticate, principalOf } from "../../http/auth-hook.js";
import { errorResponses } from "../../http/error-schemas.js";
import type { Identity } from "../../identity/identity.js";
import { eventStreams, failureEvent } from "../event-stream.js";
import { execdForRequest } from "../execd-client.js";
import { whileRunning, whyNotRunning } from "../liveness.js";
import { SandboxMetrics } from "../schemas/metrics.js";
import { SandboxParams } from "../schemas/sandboxes.js";

/** execd's sample, its fields only. */
function sample(value: Record<string, unknown>): SandboxMetrics {
  return {
    cpu_count: Number(value.cpu_count),
    cpu_used_pct: Number(value.cpu_used_pct),
    mem_total_mib: Number(value.mem_total_mib),
    mem_used_mib: Number(value.mem_used_mib),
    timestamp: Number(value.timestamp),
  };
}

/** A sandbox's CPU and memory, from its execd: one sample, or one a second. */
export const metricsRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  sandboxes: SandboxOperations;
}> = async (app, { identity, sandboxes }) => {
  app.addHook("onRequest", authenticate(identity, "sandboxes"));
  const openStream = eventStreams(app);
  const tags = ["metrics"];

  app.get(
    "/sandboxes/:id/metrics",
    { schema: { tags, params: SandboxParams, response: { 200: SandboxMetrics, ...errorResponses } } },
    async (request) => {
      const execd = await execdForRequest(sandboxes, request);
      return sample(await execd.metrics());
    },
  );

  app.get(
    "/sandboxes/:id/metrics/watch",
    {
      schema: {
        tags,
        description:
          "Server-sent events: a `metrics` event (`type` and the fields of `GET /sandboxes/{id}/metrics`) every second. When the sandbox stops running (deleted, paused, killed) the last event is an `error` with the HTTP `status`, `code` and `detail` a request would be answered with now, and the stream ends.",
        params: SandboxParams,
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const owner = principalOf(request).accountId;
      const execd = await execdForRequest(sandboxes, request);
      const upstream = new AbortController();
      const events = execd.watchMetrics(upstream.signal);
      // Fail before the stream starts when execd refuses.
      const first = await events.next();
      const stream = openStream(reply);
      stream.signal.addEventListener("abort", () => upstream.abort());
      let stopped: PaddockError | undefined;
      const stopAsking = whileRunning(sandboxes, id, owner, (reason) => {
        stopped = reason;
        upstream.abort();
      });
      try {
        for (let next = first; !next.done && !stream.signal.aborted; next = await events.next()) {
          const event: SseEvent = next.value;
          // Read from execd only as fast as the client takes them (execd skips samples meanwhile).
          if (event.type === "metrics") await stream.write({ type: "metrics", ...sample(event) });
        }
        throw new PaddockError(Errors.endpointUnavailable, "the sandbox's metrics stream ended");
      } catch (error) {
        // A client that went away (or a server closing) has nobody to tell. A stream that broke
        // off is put down to the sandbox when it no longer runs (a delete's connections may close
        // before the record is gone), so the reason is the same however the end was noticed.
        if (stopped || !stream.signal.aborted)
          stream.send(failureEvent(stopped ?? (await whyNotRunning(sandboxes, id, owner)) ?? error));
      } finally {
        stopAsking();
        upstream.abort();
        await events.return(undefined);
        stream.end();
      }
    },
  );
};
