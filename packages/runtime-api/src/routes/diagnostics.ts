import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Errors, PaddockError } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import { errorResponses } from "../schemas/common.js";
import {
  DiagnosticContent,
  DiagnosticContentQuery,
  DiagnosticParams,
  DiagnosticQuery,
} from "../schemas/diagnostics.js";
import { sign, verify } from "../signing.js";

export interface DiagnosticRoutesOptions {
  sandboxes: SandboxOperations;
  publicUrl: () => string;
  secretKey: string;
  inlineLimitBytes: number;
}

const contentType = "text/plain; charset=utf-8";
const urlLifetimeSeconds = 15 * 60;

/** Diagnostic descriptors: the text inline when small, else a signed download URL on this server. */
export const diagnosticRoutes: FastifyPluginAsyncTypebox<DiagnosticRoutesOptions> = async (app, options) => {
  app.get(
    "/sandboxes/:sandboxId/diagnostics/:kind",
    {
      schema: {
        params: DiagnosticParams,
        querystring: DiagnosticQuery,
        response: { 200: DiagnosticContent, ...errorResponses },
      },
    },
    async (request) => {
      const { sandboxId, kind } = request.params;
      const { scope } = request.query;
      const { text, truncated } = await options.sandboxes.diagnostics(sandboxId, kind, scope);
      const bytes = Buffer.byteLength(text);
      const base = { sandboxId, kind, scope, contentType, truncated };
      if (bytes <= options.inlineLimitBytes) return { ...base, delivery: "inline" as const, content: text };
      const expires = Math.floor(Date.now() / 1000) + urlLifetimeSeconds;
      const signature = sign(options.secretKey, "diagnostics", sandboxId, kind, scope, expires);
      const query = new URLSearchParams({ scope, expires: String(expires), signature });
      return {
        ...base,
        delivery: "url" as const,
        contentUrl: `${options.publicUrl().replace(/\/$/, "")}/v1/sandboxes/${sandboxId}/diagnostics/${kind}/content?${query}`,
        contentLength: bytes,
        expiresAt: new Date(expires * 1000).toISOString(),
      };
    },
  );
};

/** The download behind a diagnostics URL: authorised by its signature, not by the API key. */
export const diagnosticContentRoutes: FastifyPluginAsyncTypebox<DiagnosticRoutesOptions> = async (
  app,
  options,
) => {
  app.get(
    "/sandboxes/:sandboxId/diagnostics/:kind/content",
    { schema: { params: DiagnosticParams, querystring: DiagnosticContentQuery } },
    async (request, reply) => {
      const { sandboxId, kind } = request.params;
      const { scope, expires, signature } = request.query;
      if (
        expires * 1000 < Date.now() ||
        !verify(options.secretKey, signature, "diagnostics", sandboxId, kind, scope, expires)
      ) {
        throw new PaddockError(
          Errors.forbidden,
          "this diagnostics link is invalid or has expired; ask for a new one",
        );
      }
      const { text } = await options.sandboxes.diagnostics(sandboxId, kind, scope);
      return reply.type(contentType).send(text);
    },
  );
};
