import { PassThrough } from "node:stream";
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { E2B_ENVD_VERSION, Errors, isPaddockError, PaddockError } from "@paddock/common";
import type {
  AccountTemplate,
  BuildLogEntry,
  TemplateBuild,
  TemplateBuilds,
  TemplateCatalog,
  TemplateQuota,
} from "@paddock/runtime";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { buildSpecOf, E2bTemplateStart } from "./template-spec.js";
import { issueUploadToken, verifyUploadToken } from "./upload-token.js";
import { templateAliases, templateResources } from "./wire.js";

/** What E2B's template builder needs of the server: the account builds, and its plan's limits. */
export interface E2bTemplateBuilds {
  builds: TemplateBuilds;
  /** How many templates the account's plan lets it keep, and build at once. */
  quotaOf(accountId: string): Promise<TemplateQuota>;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route's URL carries its own credential (a signed token): no API key is asked for. */
    signedUrl?: boolean;
  }
}

export interface E2bTemplateRoutesOptions extends E2bTemplateBuilds {
  catalog: TemplateCatalog;
  secretKey: string;
  publicUrl: () => string;
  /** The calling account, once the request is authenticated. */
  owner(request: FastifyRequest): string;
}

/** Kept out of Paddock's own OpenAPI document, as every E2B route. */
const hidden = { hide: true } as const;
const Hash = Type.String({ minLength: 1, maxLength: 128 });
const TemplateParams = Type.Object({ templateID: Type.String({ minLength: 1, maxLength: 128 }) });
const FilesParams = Type.Object({ templateID: TemplateParams.properties.templateID, hash: Hash });
const BuildParams = Type.Object({
  templateID: TemplateParams.properties.templateID,
  buildID: Type.String({ minLength: 1, maxLength: 128 }),
});
const NewTemplate = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  /** E2B's older name for `name`. */
  alias: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 32 })),
  teamID: Type.Optional(Type.String({ maxLength: 128 })),
  cpuCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  memoryMB: Type.Optional(Type.Integer({ minimum: 128, maximum: 262_144 })),
  minFreeDiskMb: Type.Optional(Type.Integer({ minimum: 0 })),
});
const StatusQuery = Type.Object({
  logsOffset: Type.Optional(Type.Integer({ minimum: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  level: Type.Optional(Type.String({ maxLength: 16 })),
});
const hashPattern = /^[a-f0-9]{64}$/;
/** Why a build's start can be refused for its steps alone (the build itself was fine). */
const refusedSteps = new Set([
  Errors.invalidTemplateBuild.code,
  Errors.templateFilesNotFound.code,
  Errors.invalidRequest.code,
]);

/** E2B knows four states of a build; a cancelled one is an error. */
function e2bBuildStatus(build: TemplateBuild): "waiting" | "building" | "ready" | "error" {
  return build.status === "cancelled" ? "error" : build.status;
}

function logEntry(entry: BuildLogEntry) {
  return { timestamp: entry.at, level: entry.level, message: entry.message };
}

/** E2B's `Template` of a list. */
function listedTemplate(template: AccountTemplate, builds: TemplateBuild[]) {
  const latest = builds.reduce<TemplateBuild | undefined>(
    (last, build) => (!last || build.createdAt >= last.createdAt ? build : last),
    undefined,
  );
  return {
    templateID: template.id,
    buildID: template.currentBuildId ?? latest?.id ?? "",
    ...templateResources(template.settings.resources),
    public: template.published,
    aliases: [template.name],
    names: [template.name],
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
    createdBy: null,
    lastSpawnedAt: null,
    spawnCount: 0,
    buildCount: builds.length,
    envdVersion: E2B_ENVD_VERSION,
    buildStatus: latest ? e2bBuildStatus(latest) : "waiting",
  };
}

/**
 * E2B's template builder (`Template.build` of its SDKs) over the accounts' template builds
 * (decision 0198): ask for a build, upload the files of COPY steps through signed links, start it
 * with the steps, follow its status and log. The template's id is Paddock's (`tpl-…`); sandboxes
 * start from it by its name, as E2B's do from an alias.
 */
export const e2bTemplateRoutes: FastifyPluginAsyncTypebox<E2bTemplateRoutesOptions> = async (
  app,
  options,
) => {
  const { builds, catalog, owner } = options;

  /** The caller's own template, by id (or name); another account's is not found. */
  const ownTemplate = async (accountId: string, templateId: string): Promise<AccountTemplate> => {
    const template = await builds.find(accountId, templateId);
    if (!template) throw new PaddockError(Errors.templateNotFound, `template ${templateId} not found`);
    return template;
  };
  const ownBuild = async (request: FastifyRequest, templateId: string, buildId: string) => {
    const template = await ownTemplate(owner(request), templateId);
    const build = await builds.build(template, buildId);
    if (!build)
      throw new PaddockError(Errors.templateBuildNotFound, `template ${templateId} has no build ${buildId}`);
    return { template, build };
  };
  const checkHash = (hash: string) => {
    if (!hashPattern.test(hash))
      throw new PaddockError(Errors.invalidRequest, "params.hash: must be 64 lowercase hexadecimal digits");
  };

  app.post("/v3/templates", { schema: { ...hidden, body: NewTemplate } }, async (request, reply) => {
    const { cpuCount, memoryMB } = request.body;
    const full = request.body.name ?? request.body.alias;
    if (!full) throw new PaddockError(Errors.invalidRequest, "body.name: the template's name is required");
    // `name:tag`: builds are kept by name; a tag names nothing more here.
    const [name = "", tag] = full.split(":", 2);
    const accountId = owner(request);
    const resources = {
      ...(cpuCount !== undefined ? { cpu: String(cpuCount) } : {}),
      ...(memoryMB !== undefined ? { memory: `${memoryMB}Mi` } : {}),
    };
    const { template, build } = await builds.request({
      owner: accountId,
      name,
      ...(Object.keys(resources).length ? { resources } : {}),
      quota: await options.quotaOf(accountId),
    });
    return reply.status(202).send({
      templateID: template.id,
      buildID: build.id,
      public: template.published,
      aliases: [template.name],
      names: [template.name],
      tags: [...(tag ? [tag] : []), ...(request.body.tags ?? [])],
    });
  });

  app.get(
    "/templates/:templateID/files/:hash",
    { schema: { ...hidden, params: FilesParams } },
    async (request, reply) => {
      const { templateID, hash } = request.params;
      checkHash(hash);
      const accountId = owner(request);
      const template = await ownTemplate(accountId, templateID);
      if (builds.hasFiles(accountId, hash)) return reply.status(201).send({ present: true });
      const token = issueUploadToken(options.secretKey, { accountId, templateId: template.id, hash });
      const base = options.publicUrl().replace(/\/+$/, "");
      const url = `${base}${app.prefix}/templates/${template.id}/files/${hash}?token=${token}`;
      return reply.status(201).send({ present: false, url });
    },
  );

  // The upload itself: E2B's SDK PUTs a tar.gz to the link, without its API key.
  await app.register(async (scope) => {
    const uploads = scope.withTypeProvider<TypeBoxTypeProvider>();
    // The body is streamed to the build files as it comes, whatever its type says.
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser("*", (_request, _payload, done) => done(null));
    uploads.put(
      "/templates/:templateID/files/:hash",
      {
        config: { signedUrl: true },
        schema: {
          ...hidden,
          params: FilesParams,
          querystring: Type.Object({ token: Type.Optional(Type.String({ maxLength: 512 })) }),
        },
      },
      async (request, reply) => {
        const { templateID, hash } = request.params;
        checkHash(hash);
        const accountId = verifyUploadToken(options.secretKey, request.query.token ?? "", {
          templateId: templateID,
          hash,
        });
        if (!accountId)
          throw new PaddockError(
            Errors.unauthorized,
            "this upload link is not valid or has expired; ask for a new one (GET /templates/{templateID}/files/{hash})",
          );
        await ownTemplate(accountId, templateID);
        // Through a stream of its own: a refused upload (too large) ends that one, while the
        // request is read to its end, so the client that sent it hears why.
        const body = new PassThrough();
        request.raw.pipe(body);
        // A client gone mid-upload ends the upload (its partial file removed), not a wait forever.
        request.raw.once("close", () => {
          if (!request.raw.complete)
            body.destroy(new PaddockError(Errors.invalidRequest, "the upload ended before its body did"));
        });
        try {
          await builds.storeFiles(accountId, body, hash);
        } catch (error) {
          request.raw.unpipe(body);
          request.raw.resume();
          throw error;
        }
        return reply.status(201).send({});
      },
    );
  });

  app.post(
    "/v2/templates/:templateID/builds/:buildID",
    { schema: { ...hidden, params: BuildParams, body: E2bTemplateStart } },
    async (request, reply) => {
      const { build } = await ownBuild(request, request.params.templateID, request.params.buildID);
      try {
        const templateIds = (await catalog.list(owner(request))).map((template) => template.id);
        const { spec, notes } = buildSpecOf(request.body, templateIds);
        await builds.run(build, spec, notes);
      } catch (error) {
        // Steps refused leave the build waiting for steps that will not come: it ends now, so
        // it does not hold one of the account's builds until it is swept.
        if (isPaddockError(error) && refusedSteps.has(error.code))
          await builds.cancel(build).catch(() => undefined);
        throw error;
      }
      return reply.status(202).send();
    },
  );

  app.get(
    "/templates/:templateID/builds/:buildID/status",
    { schema: { ...hidden, params: BuildParams, querystring: StatusQuery } },
    async (request) => {
      const { template, build } = await ownBuild(request, request.params.templateID, request.params.buildID);
      const entries = await builds.logs(build.id, request.query.logsOffset ?? 0, request.query.limit ?? 100);
      const status = e2bBuildStatus(build);
      return {
        templateID: template.id,
        buildID: build.id,
        status,
        logEntries: entries.map(logEntry),
        logs: entries.map((entry) => entry.message),
        ...(status === "error"
          ? {
              reason: {
                message: build.reason ?? "the build failed",
                // E2B numbers steps as Paddock does, from 1 (its step 0 is the base).
                ...(build.failedStep !== null ? { step: String(build.failedStep) } : {}),
                logEntries: [],
              },
            }
          : {}),
      };
    },
  );

  app.get(
    "/templates/aliases/:alias",
    { schema: { ...hidden, params: Type.Object({ alias: Type.String({ minLength: 1, maxLength: 128 }) }) } },
    async (request) => {
      const [alias = ""] = request.params.alias.split(":", 2);
      const accountId = owner(request);
      const own = await builds.find(accountId, alias);
      if (own) return { templateID: own.id, public: own.published };
      // E2B's answer for a name that exists but is not the caller's: the SDK reads it as taken.
      if (await catalog.find(templateAliases[alias] ?? alias, accountId))
        throw new PaddockError(
          Errors.forbidden,
          `${alias} is a built-in or published template, not the account's`,
        );
      throw new PaddockError(Errors.templateNotFound, `the account has no template ${alias}`);
    },
  );

  app.get("/templates", { schema: hidden }, async (request) => {
    const templates = await builds.list(owner(request));
    return Promise.all(
      templates.map(async (template) => listedTemplate(template, await builds.builds(template))),
    );
  });

  app.delete(
    "/templates/:templateID",
    { schema: { ...hidden, params: TemplateParams } },
    async (request, reply) => {
      const template = await ownTemplate(owner(request), request.params.templateID);
      await builds.remove(template);
      return reply.status(204).send();
    },
  );
};
