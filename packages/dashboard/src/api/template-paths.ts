import type { paths } from "paddock/schema";

/**
 * The account-template routes (decision 0198) as openapi-fetch sees a path, typed by hand from
 * openapi/control-plane.json for the SDK's generated types that do not have them yet. `Paths`
 * keeps a generated path over its hand-typed one, so once `npm run generate -w paddock` adds
 * them these types step aside.
 */
type Json<Body> = { headers: Record<string, unknown>; content: { "application/json": Body } };
type Refusal = Json<{ code: string; detail: string }>;
type Refusals = { 400: Refusal; 401: Refusal; 403: Refusal; 404: Refusal; 409: Refusal };
interface Operation<Parameters, Answers, Body = never> {
  parameters: Parameters & { header?: never; cookie?: never };
  requestBody?: Body;
  responses: Answers & Refusals;
}
interface PathItem {
  parameters: { query?: never; header?: never; path?: never; cookie?: never };
}
type NameParams = { query?: never; path: { name: string } };
type BuildParams = { query?: never; path: { name: string; buildId: string } };

export type BuildStatus = "waiting" | "building" | "ready" | "error" | "cancelled";

export interface AccountTemplate {
  id: string;
  name: string;
  description: string;
  published: boolean;
  /** The build sandboxes start from; null until one succeeds. */
  currentBuildId: string | null;
  resourceLimits: { [key: string]: string };
  user: string;
  workdir: string;
  startCommand: string | null;
  readyCommand: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TemplateBuild {
  id: string;
  templateId: string;
  status: BuildStatus;
  reason: string | null;
  failedStep: number | null;
  steps: number;
  imageBytes: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface BuildLogEntry {
  seq: number;
  at: string;
  level: "info" | "warn" | "error";
  message: string;
}

interface TemplatePaths {
  "/templates": PathItem & {
    get: Operation<{ query?: never; path?: never }, { 200: Json<{ items: AccountTemplate[] }> }>;
  };
  "/templates/{name}": PathItem & {
    get: Operation<NameParams, { 200: Json<AccountTemplate & { builds: TemplateBuild[] }> }>;
    delete: Operation<NameParams, { 204: { headers: Record<string, unknown>; content?: never } }>;
  };
  "/templates/{name}/builds": PathItem & {
    post: Operation<
      {
        query?: { dockerfile?: string; description?: string; cpu?: string; memory?: string; force?: boolean };
        path: { name: string };
      },
      { 202: Json<{ template: AccountTemplate; build: TemplateBuild }> },
      { content: { "application/x-tar": unknown; "application/gzip": unknown } }
    >;
  };
  "/templates/{name}/builds/{buildId}": PathItem & {
    get: Operation<BuildParams, { 200: Json<TemplateBuild> }>;
  };
  "/templates/{name}/builds/{buildId}/cancel": PathItem & {
    post: Operation<BuildParams, { 202: Json<TemplateBuild> }>;
  };
}

export type Paths = paths & Omit<TemplatePaths, keyof paths>;
