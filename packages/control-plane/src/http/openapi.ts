import swagger from "@fastify/swagger";
import { errorDefinitions } from "@paddock/common";
import type { Db } from "@paddock/db";
import type { SandboxOperations, TemplateBuilds, TemplateCatalog, VolumeOperations } from "@paddock/runtime";
import Fastify, { type FastifyInstance } from "fastify";
import { optionalBodies } from "./optional-body.js";
import { controlPlane } from "./plugin.js";

export const openApiInfo = {
  title: "Paddock control plane",
  version: "0.1.0",
  description:
    "Generated from the route schemas by `npm run openapi -w @paddock/control-plane`; do not edit by hand. Authenticate with `Authorization: Bearer <API key or session token>`. Errors are `{code, detail}`; the codes are listed in docs/errors.md.",
};

/** Registers the OpenAPI generator on a server: it documents the tagged (control-plane) routes. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: openApiInfo,
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
    hideUntagged: true,
    transformObject: (document) =>
      "openapiObject" in document ? optionalBodies(document.openapiObject) : document.swaggerObject,
  });
}

/** The control plane's OpenAPI document, generated from its route schemas alone. */
export async function generateOpenApi(): Promise<string> {
  const app = Fastify({ logger: false });
  await registerOpenApi(app);
  // Generating needs the routes, not their dependencies: nothing here is ever called (but the
  // resume check, registered as the plugin starts).
  await app.register(controlPlane, {
    db: {} as Db,
    sandboxes: { checkResumes: () => undefined } as unknown as SandboxOperations,
    volumes: {} as VolumeOperations,
    templates: {} as TemplateCatalog,
    templateBuilds: {} as TemplateBuilds,
    secretKey: "",
    publicUrl: () => "",
  });
  await app.ready();
  const document = JSON.stringify(app.swagger(), null, 2);
  await app.close();
  return `${document}\n`;
}

/** docs/errors.md: every stable error code, its HTTP status and meaning, from the one registry. */
export function generateErrorsDoc(): string {
  const rows = errorDefinitions()
    .sort((a, b) => a.code.localeCompare(b.code))
    .map((definition) => `| \`${definition.code}\` | ${definition.status} | ${definition.summary} |`);
  return [
    "# Error codes",
    "",
    "Generated from the error registry by `npm run openapi -w @paddock/control-plane`; do not edit by hand.",
    "The control plane answers `{code, detail}`; the runtime API and execd answer `{code, message}`.",
    "",
    "A refused field is named in the detail (or message) as `<part>.<JSON path>: <what is wrong>`, the part being",
    "`body`, `query`, `path` or `headers`, on every surface (E2B's `{code, message}` and the egress sidecar's too):",
    '`body.timeout: unknown property "timeout"; did you mean "timeoutMs"?`, `body.memoryMb: must be integer`,',
    '`query.pageSize: must be <= 200`, `body: missing required property "command"`,',
    '`body.networkPolicy.egress[0].action: must be one of "allow", "deny"`. The first problem found is reported.',
    "The code stays the stable part to match on; the wording may improve.",
    "",
    "| code | status | meaning |",
    "|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}
