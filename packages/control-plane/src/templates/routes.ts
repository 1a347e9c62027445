import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Errors, PaddockError } from "@paddock/common";
import type {
  AccountTemplate as AccountTemplateModel,
  TemplateBuild as TemplateBuildModel,
  TemplateBuilds,
} from "@paddock/runtime";
import type { Static } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { AuditTrail } from "../audit/audit-trail.js";
import { authenticate, principalOf } from "../http/auth-hook.js";
import { deletedResponses, ErrorBody, errorResponses } from "../http/error-schemas.js";
import type { Identity } from "../identity/identity.js";
import type { AccountLimits } from "../plans/account-limits.js";
import { eventStreams, failureEvent } from "../sandboxes/event-stream.js";
import {
  AccountTemplateDetail,
  AccountTemplateList,
  BuildContext,
  BuildLogPage,
  BuildLogQuery,
  BuildParams,
  BuildStarted,
  ContextBuildQuery,
  StepsBuildRequest,
  TemplateBuild,
  TemplateParams,
  UploadedFiles,
} from "./schemas.js";

/** How often a followed log looks for new entries. */
const followIntervalMs = 100;

/** Content types of a build context (or any build files) in a request body. */
const archiveTypes = [
  "application/x-tar",
  "application/gzip",
  "application/x-gzip",
  "application/octet-stream",
];

export function templateToWire(template: AccountTemplateModel) {
  return {
    id: template.id,
    name: template.name,
    description: template.description,
    published: template.published,
    currentBuildId: template.currentBuildId,
    resourceLimits: template.settings.resources,
    user: template.settings.user,
    workdir: template.settings.workdir,
    startCommand: template.settings.startCommand ?? null,
    readyCommand: template.settings.readyCommand ?? null,
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
  };
}

export function buildToWire(build: TemplateBuildModel) {
  return {
    id: build.id,
    templateId: build.templateId,
    status: build.status,
    reason: build.reason,
    failedStep: build.failedStep,
    steps: build.spec.steps.length,
    imageBytes: build.imageBytes,
    createdAt: build.createdAt,
    startedAt: build.startedAt,
    finishedAt: build.finishedAt,
  };
}

/** A template as the audit log names it. */
function targetOf(template: { id: string; name: string }) {
  return { type: "template", id: template.id, name: template.name };
}

/**
 * The account's own templates (decision 0198): builds from a Dockerfile and its context, or from
 * a template and steps; their logs, live or afterwards; cancel; delete. Every call is scoped to
 * the caller's account: another account's template answers 404.
 */
export const templateRoutes: FastifyPluginAsyncTypebox<{
  identity: Identity;
  templateBuilds: TemplateBuilds;
  limits: AccountLimits;
  audit: AuditTrail;
}> = async (app, { identity, templateBuilds, limits, audit }) => {
  app.addHook("onRequest", authenticate(identity, "sandboxes"));
  const openStream = eventStreams(app);
  const owner = (request: FastifyRequest) => principalOf(request as never).accountId;
  // An archive streams to disk as it comes, never held in memory.
  app.addContentTypeParser(archiveTypes, (_request, _payload, done) => done(null));
  const tags = ["templates"];

  const templateOf = async (request: FastifyRequest, name: string) => {
    const template = await templateBuilds.find(owner(request), name);
    if (!template) throw new PaddockError(Errors.templateNotFound, `no template ${name} of this account`);
    return template;
  };
  const buildOf = async (request: FastifyRequest, name: string, buildId: string) => {
    const template = await templateOf(request, name);
    const build = await templateBuilds.build(template, buildId);
    if (!build)
      throw new PaddockError(Errors.templateBuildNotFound, `no build ${buildId} of template ${name}`);
    return { template, build };
  };
  const isArchive = (request: FastifyRequest) =>
    archiveTypes.includes((request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "");

  app.get(
    "/templates",
    {
      schema: {
        tags,
        description:
          "The account's own templates. `GET /sandboxes/templates` lists every template it can start from.",
        response: { 200: AccountTemplateList, ...errorResponses },
      },
    },
    async (request) => ({ items: (await templateBuilds.list(owner(request))).map(templateToWire) }),
  );

  app.post(
    "/templates/files",
    {
      schema: {
        tags,
        description:
          "Uploads an archive (tar, or tar.gz) of files for build steps; a COPY step names it by the `hash` answered.",
        body: { content: Object.fromEntries(archiveTypes.map((type) => [type, { schema: BuildContext }])) },
        response: { 201: UploadedFiles, ...errorResponses, 413: ErrorBody, 415: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!isArchive(request))
        throw new PaddockError(
          Errors.unsupportedMediaType,
          "send the archive as application/x-tar or application/gzip",
        );
      return reply.status(201).send(await templateBuilds.storeFiles(owner(request), request.raw));
    },
  );

  app.post(
    "/templates/:name/builds",
    {
      schema: {
        tags,
        description:
          "Builds the template `name` of the account (made on its first build). The body is either a build context (tar or tar.gz holding the Dockerfile, `?dockerfile=` names another) or JSON: a template to start `from` and `steps`. Answers at once; the build runs on, and becomes the template's current one only if it succeeds.",
        params: TemplateParams,
        querystring: ContextBuildQuery,
        body: {
          content: {
            "application/json": { schema: StepsBuildRequest },
            ...Object.fromEntries(archiveTypes.map((type) => [type, { schema: BuildContext }])),
          },
        },
        response: { 202: BuildStarted, ...errorResponses, 413: ErrorBody },
      },
    },
    async (request, reply) => {
      const account = owner(request);
      const quota = await limits.templateQuota(account);
      const { name } = request.params;
      const existed = (await templateBuilds.find(account, name)) !== undefined;
      const recordCreated = (template: AccountTemplateModel) =>
        audit.record(request, principalOf(request), "template.created", targetOf(template));
      let started: { template: AccountTemplateModel; build: TemplateBuildModel };
      if (isArchive(request)) {
        const { dockerfile = "Dockerfile", description, cpu, memory, force } = request.query;
        // A name that cannot be built is refused before its context is read.
        await templateBuilds.assertName(account, name);
        const { hash } = await templateBuilds.storeFiles(account, request.raw);
        started = await templateBuilds.buildDockerfile({
          owner: account,
          name,
          description,
          resources: resourcesOf(cpu, memory),
          quota,
          files: hash,
          dockerfile,
          force,
        });
      } else {
        // No body at all is no build (the schema checks a body only when there is one).
        if (request.body === undefined)
          throw new PaddockError(
            Errors.invalidRequest,
            "body: missing; send JSON with `from` and `steps`, or a build context (tar or tar.gz)",
          );
        const { description, resourceLimits, ...spec } = request.body as Static<typeof StepsBuildRequest>;
        const requested = await templateBuilds.request({
          owner: account,
          name,
          description,
          resources: resourcesOf(resourceLimits?.cpu, resourceLimits?.memory),
          quota,
        });
        // Recorded before the steps are checked: refused steps still leave the template, its build failed.
        if (!existed) await recordCreated(requested.template);
        started = { template: requested.template, build: await templateBuilds.run(requested.build, spec) };
      }
      if (isArchive(request) && !existed) await recordCreated(started.template);
      await audit.record(
        request,
        principalOf(request),
        "template.build_started",
        targetOf(started.template),
        {
          build: started.build.id,
        },
      );
      return reply
        .status(202)
        .send({ template: templateToWire(started.template), build: buildToWire(started.build) });
    },
  );

  app.get(
    "/templates/:name",
    {
      schema: {
        tags,
        params: TemplateParams,
        response: { 200: AccountTemplateDetail, ...errorResponses },
      },
    },
    async (request) => {
      const template = await templateOf(request, request.params.name);
      return {
        ...templateToWire(template),
        builds: (await templateBuilds.builds(template)).map(buildToWire),
      };
    },
  );

  app.delete(
    "/templates/:name",
    {
      schema: {
        tags,
        description:
          "Deletes the template, its builds, logs and images; refused while sandboxes run from it.",
        params: TemplateParams,
        response: deletedResponses,
      },
    },
    async (request, reply) => {
      const template = await templateOf(request, request.params.name);
      await templateBuilds.remove(template);
      await audit.record(request, principalOf(request), "template.deleted", targetOf(template));
      return reply.status(204).send(undefined as never);
    },
  );

  app.get(
    "/templates/:name/builds/:buildId",
    { schema: { tags, params: BuildParams, response: { 200: TemplateBuild, ...errorResponses } } },
    async (request) =>
      buildToWire((await buildOf(request, request.params.name, request.params.buildId)).build),
  );

  app.post(
    "/templates/:name/builds/:buildId/cancel",
    { schema: { tags, params: BuildParams, response: { 202: TemplateBuild, ...errorResponses } } },
    async (request, reply) => {
      const { build } = await buildOf(request, request.params.name, request.params.buildId);
      await templateBuilds.cancel(build);
      return reply.status(202).send(buildToWire(build));
    },
  );

  app.get(
    "/templates/:name/builds/:buildId/logs",
    {
      schema: {
        tags,
        description:
          "The build's log from entry `from` on. With `Accept: text/event-stream`, the entries as server-sent events (`log`), live while the build runs, then one `status` event when it ends.",
        params: BuildParams,
        querystring: BuildLogQuery,
        response: { 200: BuildLogPage, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { template, build } = await buildOf(request, request.params.name, request.params.buildId);
      const { from = 0, limit = 1000 } = request.query;
      if (!(request.headers.accept ?? "").includes("text/event-stream")) {
        const entries = await templateBuilds.logs(build.id, from, limit);
        return { entries, next: (entries.at(-1)?.seq ?? from - 1) + 1, status: build.status };
      }
      const stream = openStream(reply);
      let next = from;
      try {
        for (;;) {
          const current = (await templateBuilds.build(template, build.id)) ?? build;
          // Entries first, then the status read before them: nothing written before the end is missed.
          for (;;) {
            const entries = await templateBuilds.logs(build.id, next, 500);
            for (const entry of entries) await stream.write({ type: "log", ...entry });
            if (stream.signal.aborted) return;
            next = (entries.at(-1)?.seq ?? next - 1) + 1;
            if (entries.length < 500) break;
          }
          if (!["waiting", "building"].includes(current.status)) {
            await stream.write({ type: "status", ...buildToWire(current) });
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, followIntervalMs));
          if (stream.signal.aborted) return;
        }
      } catch (error) {
        stream.send(failureEvent(error));
      } finally {
        stream.end();
      }
    },
  );
};

function resourcesOf(
  cpu: string | undefined,
  memory: string | undefined,
): Record<string, string> | undefined {
  if (!cpu && !memory) return undefined;
  return { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) };
}
