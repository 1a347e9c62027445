import { type Static, Type } from "@sinclair/typebox";

export const EndpointParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 128 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
});
export type EndpointParams = Static<typeof EndpointParams>;

export const EndpointQuery = Type.Object(
  {
    expiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 24 * 3600,
        default: 3600,
        description: "How long the URL works, in seconds.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type EndpointQuery = Static<typeof EndpointQuery>;

export const PublicEndpoint = Type.Object({
  url: Type.String({
    description:
      "Reaches the port through the control plane's proxy (HTTP and WebSocket); the signed token in its path is the credential, so a browser can open it.",
  }),
  token: Type.String({
    description:
      "The same signed token, for `X-Paddock-Access-Token` on `/sandboxes/{id}/ports/{port}/…` when the URL must not carry it.",
  }),
  expiresAt: Type.String({ format: "date-time" }),
});
export type PublicEndpoint = Static<typeof PublicEndpoint>;
