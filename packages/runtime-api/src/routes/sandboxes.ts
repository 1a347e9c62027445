import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Errors, invalidField, PaddockError } from "@paddock/common";
import type { SandboxOperations } from "@paddock/runtime";
import { inExtensionTerms, lifecycleFromExtensions } from "../lifecycle-extensions.js";
import { Empty, errorResponses } from "../schemas/common.js";
import {
  CreateSandboxRequest,
  CreateSandboxResponse,
  ListSandboxesQuery,
  ListSandboxesResponse,
  PatchMetadataRequest,
  RenewRequest,
  RenewResponse,
  Sandbox,
  SandboxParams,
} from "../schemas/sandboxes.js";
import { sandboxToWire } from "../wire.js";

export interface SandboxRoutesOptions {
  sandboxes: SandboxOperations;
}

/** Parses the list filter `metadata=k%3Dv%26k2%3Dv2` (an URL-encoded query string of pairs). */
function metadataFilter(text: string | undefined): Record<string, string> | undefined {
  if (!text) return undefined;
  const filter: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (!key)
      throw new PaddockError(Errors.invalidRequest, invalidField("query.metadata", "has an empty key"));
    filter[key] = value;
  }
  return filter;
}

export const sandboxRoutes: FastifyPluginAsyncTypebox<SandboxRoutesOptions> = async (app, { sandboxes }) => {
  app.post(
    "/sandboxes",
    { schema: { body: CreateSandboxRequest, response: { 202: CreateSandboxResponse, ...errorResponses } } },
    async (request, reply) => {
      const body = request.body;
      if (body.credentialProxy?.enabled) {
        throw new PaddockError(
          Errors.invalidRequest,
          invalidField("body.credentialProxy.enabled", "is not supported by this server"),
        );
      }
      // Pool mode (upstream's `extensions.poolRef`): a template's warm pool serves the create.
      const poolRef = body.extensions?.poolRef;
      if (poolRef && (body.snapshotId || body.networkPolicy || body.platform || body.volumes?.length)) {
        throw new PaddockError(
          Errors.invalidRequest,
          invalidField(
            "body.extensions.poolRef",
            "cannot be combined with snapshotId, networkPolicy, platform or volumes",
          ),
        );
      }
      // The lifecycle policy travels as `paddock.lifecycle.*` extensions (kept as given, shown back).
      const lifecycle = lifecycleFromExtensions(body.extensions);
      const created = sandboxes.create({
        ...(Object.keys(lifecycle).length ? { lifecycle } : {}),
        ...(poolRef ? { template: poolRef } : {}),
        ...(body.image ? { image: body.image } : {}),
        ...(body.snapshotId ? { snapshotId: body.snapshotId } : {}),
        timeout: (body.timeout as number | null | undefined) ?? null,
        ...(body.resourceLimits ? { resourceLimits: body.resourceLimits } : {}),
        ...(body.entrypoint ? { entrypoint: body.entrypoint } : {}),
        ...(body.env ? { env: body.env } : {}),
        ...(body.metadata ? { metadata: body.metadata } : {}),
        ...(body.extensions ? { extensions: body.extensions } : {}),
        ...(body.platform ? { platform: body.platform } : {}),
        ...(body.networkPolicy ? { networkPolicy: body.networkPolicy } : {}),
        ...(body.secureAccess !== undefined ? { secureAccess: body.secureAccess } : {}),
        ...(body.volumes ? { volumes: body.volumes } : {}),
      });
      const sandbox = await created.catch((error: unknown) => {
        throw inExtensionTerms(error);
      });
      reply.header("location", `${request.url.replace(/\/$/, "")}/${sandbox.id}`);
      return reply.status(202).send(sandboxToWire(sandbox, false));
    },
  );

  app.get(
    "/sandboxes",
    {
      schema: {
        querystring: ListSandboxesQuery,
        response: { 200: ListSandboxesResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { state, metadata, page, pageSize } = request.query;
      const filter = metadataFilter(metadata);
      const result = await sandboxes.list({
        ...(state ? { states: state } : {}),
        ...(filter ? { metadata: filter } : {}),
        ...(page ? { page } : {}),
        ...(pageSize ? { pageSize } : {}),
      });
      return { items: result.items.map((sandbox) => sandboxToWire(sandbox)), pagination: result.pagination };
    },
  );

  app.get(
    "/sandboxes/:sandboxId",
    { schema: { params: SandboxParams, response: { 200: Sandbox, ...errorResponses } } },
    async (request) => sandboxToWire(await sandboxes.get(request.params.sandboxId)),
  );

  app.delete(
    "/sandboxes/:sandboxId",
    { schema: { params: SandboxParams, response: { 202: Empty, 204: Empty, ...errorResponses } } },
    async (request, reply) => {
      await sandboxes.delete(request.params.sandboxId);
      return reply.status(204).send(undefined as never);
    },
  );

  // No body (OpenSandbox's): a pause is in memory; the operator's `runtime.disk_pause_after_seconds`
  // moves a sandbox paused that long to disk (decision 0110).
  app.post(
    "/sandboxes/:sandboxId/pause",
    { schema: { params: SandboxParams, response: { 202: Empty, 204: Empty, ...errorResponses } } },
    async (request, reply) => {
      await sandboxes.pause(request.params.sandboxId);
      return reply.status(202).send(undefined as never);
    },
  );

  app.post(
    "/sandboxes/:sandboxId/resume",
    { schema: { params: SandboxParams, response: { 202: Empty, 204: Empty, ...errorResponses } } },
    async (request, reply) => {
      await sandboxes.resume(request.params.sandboxId);
      return reply.status(202).send(undefined as never);
    },
  );

  app.post(
    "/sandboxes/:sandboxId/renew-expiration",
    {
      schema: {
        params: SandboxParams,
        body: RenewRequest,
        response: { 200: RenewResponse, ...errorResponses },
      },
    },
    async (request) => {
      const expiresAt = new Date(request.body.expiresAt);
      if (Number.isNaN(expiresAt.getTime()))
        throw new PaddockError(
          Errors.invalidRequest,
          invalidField("body.expiresAt", "is not an RFC 3339 time"),
        );
      return sandboxes.renew(request.params.sandboxId, expiresAt);
    },
  );

  app.patch(
    "/sandboxes/:sandboxId/metadata",
    {
      schema: {
        params: SandboxParams,
        body: PatchMetadataRequest,
        response: { 200: Sandbox, ...errorResponses },
      },
    },
    async (request) =>
      sandboxToWire(
        await sandboxes.patchMetadata(
          request.params.sandboxId,
          request.body as Record<string, string | null>,
        ),
      ),
  );
};
