import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Errors, PaddockError } from "@paddock/common";
import type { Sandbox as SandboxModel, SandboxOperations, TemplateCatalog } from "@paddock/runtime";
import type { AuditTrail } from "../../audit/audit-trail.js";
import { authenticate, principalOf } from "../../http/auth-hook.js";
import { deletedResponses, ErrorBody, errorResponses } from "../../http/error-schemas.js";
import { optionalBody } from "../../http/optional-body.js";
import type { Identity } from "../../identity/identity.js";
import type { AccountLimits } from "../../plans/account-limits.js";
import type { SandboxSecrets } from "../../secrets/sandbox-secrets.js";
import type { Usage } from "../../usage/usage.js";
import { collectCommand } from "../command-output.js";
import { eventStreams, failureEvent } from "../event-stream.js";
import { clientGone, execdForRequest } from "../execd-client.js";
import { assertCommand, assertWorkingDirectory } from "../input-checks.js";
import {
  CreateSandboxRequest,
  ListQuery,
  MetadataPatch,
  PauseRequest,
  RenewRequest,
  RunRequest,
  RunResult,
  Sandbox,
  SandboxList,
  SandboxParams,
  TemplateList,
} from "../schemas/sandboxes.js";

export interface SandboxRoutesOptions {
  identity: Identity;
  sandboxes: SandboxOperations;
  templates: TemplateCatalog;
  secrets: SandboxSecrets;
  usage: Usage;
  limits: AccountLimits;
  audit: AuditTrail;
}

/** A sandbox as every route and the change stream show it. */
export function toWire(sandbox: SandboxModel) {
  return {
    id: sandbox.id,
    state: sandbox.status.state,
    ...(sandbox.status.reason ? { reason: sandbox.status.reason } : {}),
    template: sandbox.template ?? null,
    metadata: sandbox.metadata,
    createdAt: sandbox.createdAt,
    expiresAt: sandbox.expiresAt ?? null,
    lifecycle: {
      onTimeout: sandbox.lifecycle.onTimeout,
      idleTimeout: sandbox.lifecycle.idleTimeout,
      processesKeepAwake: sandbox.lifecycle.processesKeepAwake,
      autoResume: sandbox.lifecycle.autoResume,
      keepMemory: sandbox.lifecycle.keepMemory,
      maxPaused: sandbox.lifecycle.maxPaused,
    },
    pausedTo: sandbox.pause?.to ?? null,
    memoryPreserved: sandbox.pause?.to === "disk" ? sandbox.pause.memoryPreserved : null,
    lastActivityAt: sandbox.lastActivityAt ?? null,
    idleAt: sandbox.idleAt ?? null,
    pausedUntil: sandbox.pausedUntil ?? null,
  };
}

/** The account's sandboxes: every call is scoped to the caller's account (others' ids answer 404). */
export const sandboxRoutes: FastifyPluginAsyncTypebox<SandboxRoutesOptions> = async (app, options) => {
  const { sandboxes, templates } = options;
  const openStream = eventStreams(app);
  app.addHook("onRequest", authenticate(options.identity, "sandboxes"));
  const owner = (request: { principal?: { accountId: string } }) => principalOf(request as never).accountId;

  app.get(
    "/sandboxes/templates",
    { schema: { tags: ["sandboxes"], response: { 200: TemplateList, ...errorResponses } } },
    async (request) => ({
      items: (await templates.list(owner(request))).map((template) => ({
        id: template.id,
        name: template.name,
        description: template.description,
        ...(template.version ? { version: template.version } : {}),
        npm: template.npm,
        resourceLimits: template.resourceLimits,
        env: template.env.map((variable) => ({ ...variable, required: variable.required ?? false })),
        ports: template.ports.map(({ port, name, description, ready }) => ({
          port,
          name,
          description,
          ready: ready !== undefined,
        })),
      })),
    }),
  );

  app.post(
    "/sandboxes",
    {
      schema: {
        tags: ["sandboxes"],
        body: CreateSandboxRequest,
        response: { 201: Sandbox, ...errorResponses, 402: ErrorBody, 429: ErrorBody },
      },
      onRequest: options.limits.hook("creates"),
    },
    async (request, reply) => {
      const { template, timeout, env, metadata, networkPolicy, secrets, volumes, lifecycle } = request.body;
      await options.usage.assertCanRun(owner(request), "create");
      await templates.resolve(template, owner(request));
      const secretEnv = await options.secrets.resolve(owner(request), secrets, env);
      const sandbox = await sandboxes.create({
        template,
        owner: owner(request),
        timeout: timeout ?? null,
        // What the caller left out of the idle rule comes from its plan; its explicit null stays.
        lifecycle: { ...(await options.limits.lifecycleDefaults(owner(request))), ...lifecycle },
        ...(env ? { env } : {}),
        ...(metadata ? { metadata } : {}),
        ...(networkPolicy ? { networkPolicy } : {}),
        ...(volumes?.length
          ? {
              volumes: volumes.map(({ volume, mountPath, readOnly, subPath }) => ({
                name: volume,
                mountPath,
                named: { name: volume },
                ...(readOnly !== undefined ? { readOnly } : {}),
                ...(subPath !== undefined ? { subPath } : {}),
              })),
            }
          : {}),
        quota: await options.limits.sandboxQuota(owner(request)),
      });
      await options.secrets.deliver(sandbox.id, owner(request), secretEnv);
      await options.audit.record(
        request,
        principalOf(request),
        "sandbox.created",
        { type: "sandbox", id: sandbox.id },
        { template },
      );
      return reply.status(201).send(toWire(sandbox));
    },
  );

  app.get(
    "/sandboxes",
    {
      schema: {
        tags: ["sandboxes"],
        querystring: ListQuery,
        response: { 200: SandboxList, ...errorResponses },
      },
    },
    async (request) => {
      const { state, metadata, template, page, pageSize } = request.query;
      const filter = metadata ? Object.fromEntries(new URLSearchParams(metadata)) : undefined;
      const result = await sandboxes.list({
        owner: owner(request),
        ...(state ? { states: state } : {}),
        ...(template ? { template } : {}),
        ...(filter ? { metadata: filter } : {}),
        ...(page ? { page } : {}),
        ...(pageSize ? { pageSize } : {}),
      });
      return { items: result.items.map(toWire), pagination: result.pagination };
    },
  );

  const one = { tags: ["sandboxes"], params: SandboxParams, response: { 200: Sandbox, ...errorResponses } };
  app.get("/sandboxes/:id", { schema: one }, async (request) =>
    toWire(await sandboxes.get(request.params.id, owner(request))),
  );
  app.post(
    "/sandboxes/:id/pause",
    {
      schema: {
        ...one,
        description:
          'Pauses the sandbox in the background (Pausing, then Paused). No body: in memory. `{"to": "disk"}` also moves a sandbox paused in memory to disk.',
        body: PauseRequest,
        [optionalBody]: true,
      },
      // No body (as before there was one) is a pause in memory.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) =>
      toWire(await sandboxes.pause(request.params.id, owner(request), { to: request.body.to ?? "memory" })),
  );
  app.post(
    "/sandboxes/:id/resume",
    { schema: { ...one, response: { ...one.response, 402: ErrorBody } } },
    async (request) => {
      await sandboxes.get(request.params.id, owner(request)); // another account's id: 404 first
      await options.usage.assertCanRun(owner(request), "resume");
      return toWire(await sandboxes.resume(request.params.id, owner(request)));
    },
  );
  app.delete(
    "/sandboxes/:id",
    { schema: { tags: ["sandboxes"], params: SandboxParams, response: deletedResponses } },
    async (request, reply) => {
      await sandboxes.delete(request.params.id, owner(request));
      await options.audit.record(request, principalOf(request), "sandbox.deleted", {
        type: "sandbox",
        id: request.params.id,
      });
      return reply.status(204).send(undefined as never);
    },
  );

  app.post("/sandboxes/:id/renew", { schema: { ...one, body: RenewRequest } }, async (request) => {
    await sandboxes.renew(
      request.params.id,
      new Date(Date.now() + request.body.timeout * 1000),
      owner(request),
    );
    return toWire(await sandboxes.get(request.params.id, owner(request)));
  });

  app.patch("/sandboxes/:id/metadata", { schema: { ...one, body: MetadataPatch } }, async (request) =>
    toWire(
      await sandboxes.patchMetadata(
        request.params.id,
        request.body as Record<string, string | null>,
        owner(request),
      ),
    ),
  );

  const commandBody = (body: {
    command: string;
    cwd?: string;
    env?: Record<string, string>;
    timeoutMs?: number;
    background?: boolean;
  }) => {
    assertCommand(body.command, body.env);
    if (body.cwd !== undefined) assertWorkingDirectory(body.cwd);
    return {
      command: body.command,
      ...(body.cwd ? { cwd: body.cwd } : {}),
      ...(body.env ? { envs: body.env } : {}),
      ...(body.timeoutMs ? { timeout: body.timeoutMs } : {}),
      ...(body.background ? { background: true } : {}),
    };
  };

  app.post(
    "/sandboxes/:id/run",
    {
      schema: {
        tags: ["commands"],
        params: SandboxParams,
        body: RunRequest,
        response: { 200: RunResult, ...errorResponses, 429: ErrorBody },
      },
      onRequest: options.limits.hook("commands"),
    },
    async (request, reply) => {
      const body = commandBody(request.body);
      const execd = await execdForRequest(sandboxes, request);
      return collectCommand(execd.runCommand(body, clientGone(reply)));
    },
  );

  app.post(
    "/sandboxes/:id/run/stream",
    {
      schema: {
        tags: ["commands"],
        description:
          "Server-sent events: `init` (the command's id in `text`), `stdout` and `stderr` (`text`), then `execution_complete` (`exit_code` 0) or `error` (`exit_code` and `error`). When the sandbox dies mid-command (deleted, killed, out of memory) the last event is an `error` with the HTTP `status`, `code` and `detail` the failure would have answered, and no `exit_code`.",
        params: SandboxParams,
        body: RunRequest,
        response: { ...errorResponses, 429: ErrorBody },
      },
      onRequest: options.limits.hook("commands"),
    },
    async (request, reply) => {
      const body = commandBody(request.body);
      const execd = await execdForRequest(sandboxes, request);
      const upstream = new AbortController();
      const events = execd.runCommand(body, upstream.signal);
      // Fail before the stream starts when execd refuses the command.
      const first = await events.next();
      const stream = openStream(reply);
      stream.signal.addEventListener("abort", () => upstream.abort());
      // A background command's stream ends after `init` by design: it goes on in the sandbox.
      let ended = request.body.background === true;
      try {
        // The next event is read from execd only once the client has room for it: a client that
        // reads slowly (or not at all) holds the command's output back in its pipe, in the sandbox.
        for (let next = first; !next.done && !stream.signal.aborted; next = await events.next()) {
          await stream.write(next.value);
          ended ||= next.value.type === "execution_complete" || next.value.type === "error";
        }
        if (!ended)
          throw new PaddockError(Errors.endpointUnavailable, "the command's stream ended before its exit");
      } catch (error) {
        // A client that went away has nobody to tell; a sandbox that died (deleted, killed, out
        // of memory) is reported as a last event with no exit code, so the stream never looks
        // like a clean end.
        if (!stream.signal.aborted) stream.send(failureEvent(error));
      } finally {
        // The client gone: execd's stream is closed, and execd kills the command with it.
        upstream.abort();
        await events.return(undefined);
        stream.end();
      }
    },
  );
};
