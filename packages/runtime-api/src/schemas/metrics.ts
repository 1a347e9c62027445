import { Type } from "@sinclair/typebox";

/**
 * An SDK's telemetry event (`MetricsEvent` of the lifecycle spec). Checked loosely: event types
 * and fields the spec adds later are accepted, as the spec asks servers to take best-effort
 * reports without failing SDKs.
 */
export const MetricsEvent = Type.Object(
  {
    eventType: Type.String({ minLength: 1, maxLength: 128 }),
    sandboxId: Type.Optional(Type.String({ maxLength: 256 })),
    image: Type.Optional(Type.String({ maxLength: 2048 })),
    createDurationMs: Type.Optional(Type.Integer({ minimum: 0 })),
    success: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true, maxProperties: 64 },
);

/** Telemetry bodies are small; anything larger is refused with 413 before it is parsed. */
export const metricsEventBodyLimit = 16 * 1024;
