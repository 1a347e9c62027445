import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Empty, errorResponses } from "../schemas/common.js";
import { MetricsEvent, metricsEventBodyLimit } from "../schemas/metrics.js";

/** `POST /metrics/events`: SDK telemetry, accepted and logged; nothing depends on it. */
export const metricsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    "/metrics/events",
    {
      bodyLimit: metricsEventBodyLimit,
      schema: { body: MetricsEvent, response: { 204: Empty, ...errorResponses } },
    },
    async (request, reply) => {
      const { eventType, sandboxId, createDurationMs, success } = request.body;
      request.log.info(
        { eventType, sandboxId, createDurationMs, success, userAgent: request.headers["user-agent"] },
        "sdk metrics event",
      );
      return reply.status(204).send(undefined as never);
    },
  );
};
