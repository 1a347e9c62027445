import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { SnapshotOperations } from "@paddock/runtime";
import { Type } from "@sinclair/typebox";
import { Empty, errorResponses } from "../schemas/common.js";
import { SandboxParams } from "../schemas/sandboxes.js";
import {
  CreateSnapshotRequest,
  ListSnapshotsQuery,
  ListSnapshotsResponse,
  Snapshot,
  SnapshotParams,
} from "../schemas/snapshots.js";
import { snapshotToWire } from "../wire.js";

export const snapshotRoutes: FastifyPluginAsyncTypebox<{ snapshots: SnapshotOperations }> = async (
  app,
  { snapshots },
) => {
  app.post(
    "/sandboxes/:sandboxId/snapshots",
    {
      schema: {
        params: SandboxParams,
        body: Type.Optional(CreateSnapshotRequest),
        response: { 202: Snapshot, ...errorResponses },
      },
    },
    async (request, reply) => {
      const snapshot = await snapshots.create(request.params.sandboxId, {
        ...(request.body?.name ? { name: request.body.name } : {}),
      });
      reply.header("location", `/v1/snapshots/${snapshot.id}`);
      return reply.status(202).send(snapshotToWire(snapshot));
    },
  );

  app.get(
    "/snapshots",
    {
      schema: {
        querystring: ListSnapshotsQuery,
        response: { 200: ListSnapshotsResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { sandboxId, name, state, page, pageSize } = request.query;
      const result = await snapshots.list({
        ...(sandboxId ? { sandboxId } : {}),
        ...(name ? { name } : {}),
        ...(state ? { states: state } : {}),
        ...(page ? { page } : {}),
        ...(pageSize ? { pageSize } : {}),
      });
      return { items: result.items.map(snapshotToWire), pagination: result.pagination };
    },
  );

  app.get(
    "/snapshots/:snapshotId",
    { schema: { params: SnapshotParams, response: { 200: Snapshot, ...errorResponses } } },
    async (request) => snapshotToWire(await snapshots.get(request.params.snapshotId)),
  );

  app.delete(
    "/snapshots/:snapshotId",
    { schema: { params: SnapshotParams, response: { 202: Empty, 204: Empty, ...errorResponses } } },
    async (request, reply) => {
      await snapshots.delete(request.params.snapshotId);
      return reply.status(204).send(undefined as never);
    },
  );
};
