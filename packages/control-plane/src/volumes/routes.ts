import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Volume as VolumeModel, VolumeOperations } from "@paddock/runtime";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { deletedResponses, errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import type { AccountLimits } from "../plans/account-limits.js";
import { CreateVolumeRequest, Volume, VolumeList, VolumeParams } from "./schemas.js";

export function volumeToWire(volume: VolumeModel) {
  return { id: volume.id, name: volume.name, sizeBytes: volume.sizeBytes, createdAt: volume.createdAt };
}

/** The account's volumes (decision 0192): every call is scoped to the caller's account (others' ids answer 404). */
export const volumeRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  volumes: VolumeOperations;
  limits: AccountLimits;
}> = async (app, { identity, volumes, limits }) => {
  app.addHook("onRequest", authenticate(identity, "sandboxes"));
  const owner = (request: { principal?: { accountId: string } }) => principalOf(request as never).accountId;

  app.post(
    "/volumes",
    {
      schema: {
        tags: ["volumes"],
        description: "Creates an empty volume of the given size, to mount into any number of sandboxes.",
        body: CreateVolumeRequest,
        response: { 201: Volume, ...errorResponses },
      },
    },
    async (request, reply) => {
      const volume = await volumes.create({
        owner: owner(request),
        name: request.body.name,
        size: request.body.size,
        quota: await limits.sandboxQuota(owner(request)),
      });
      return reply.status(201).send(volumeToWire(volume));
    },
  );

  app.get(
    "/volumes",
    { schema: { tags: ["volumes"], response: { 200: VolumeList, ...errorResponses } } },
    async (request) => ({ items: (await volumes.list(owner(request))).map(volumeToWire) }),
  );

  app.get(
    "/volumes/:id",
    { schema: { tags: ["volumes"], params: VolumeParams, response: { 200: Volume, ...errorResponses } } },
    async (request) => volumeToWire(await volumes.get(request.params.id, owner(request))),
  );

  app.delete(
    "/volumes/:id",
    {
      schema: {
        tags: ["volumes"],
        description:
          "Deletes the volume and its files; 409 `volume_in_use` while a sandbox that exists mounts it.",
        params: VolumeParams,
        response: deletedResponses,
      },
    },
    async (request, reply) => {
      await volumes.delete(request.params.id, owner(request));
      return reply.status(204).send(undefined as never);
    },
  );
};
