import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { isPaddockError } from "@paddock/common";
import type { SandboxChange, SandboxOperations } from "@paddock/runtime";
import { authenticate, principalOf } from "../../http/auth-hook.js";
import { errorResponses } from "../../http/error-schemas.js";
import type { Identity } from "../../identity/identity.js";
import { eventStreams } from "../event-stream.js";
import { toWire } from "./sandboxes.js";

const keepaliveMs = 15_000;

/** `GET /sandboxes/events`: the caller's sandboxes as they change, for dashboards. */
export const sandboxEventRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  sandboxes: SandboxOperations;
}> = async (app, { identity, sandboxes }) => {
  app.addHook("onRequest", authenticate(identity, "sandboxes"));
  const openStream = eventStreams(app);

  app.get(
    "/sandboxes/events",
    {
      schema: {
        tags: ["sandboxes"],
        description:
          'Server-sent events for the account\'s sandboxes, made through any replica: `sandbox` (`{"type":"sandbox","sandbox":…}`, the sandbox as `GET /sandboxes/{id}` answers) when one is created, changes state, metadata or expiry; `deleted` (`{"type":"deleted","id":…}`) when it is gone; `resync` when changes may have been missed, so reload the list. A `: keepalive` comment comes every 15 s.',
        response: errorResponses,
      },
    },
    async (request, reply) => {
      const owner = principalOf(request).accountId;
      const stream = openStream(reply);
      // The record is read when its change is heard, one change at a time in the order heard, so
      // an older read is never sent after a newer one.
      const relay = async (change: SandboxChange) => {
        if (change.type === "gap") return stream.send({ type: "resync" });
        if (change.type === "removed") return stream.send({ type: "deleted", id: change.id });
        try {
          stream.send({ type: "sandbox", sandbox: toWire(await sandboxes.get(change.id, owner)) });
        } catch (error) {
          // Removed since (its own event follows); a failed read leaves the client to reload.
          if (!isPaddockError(error) || error.status !== 404) stream.send({ type: "resync" });
        }
      };
      let relaying = Promise.resolve();
      const unwatch = sandboxes.watch(owner, (change) => {
        relaying = relaying.then(() => relay(change));
      });
      const keepalive = setInterval(() => stream.comment("keepalive"), keepaliveMs);
      stream.signal.addEventListener("abort", () => {
        clearInterval(keepalive);
        unwatch();
      });
    },
  );
};
