// For `hide` in route schemas: @fastify/swagger adds it to Fastify's schema type.
import type {} from "@fastify/swagger";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  describeSchemaErrors,
  Errors,
  invalidField,
  isPaddockError,
  notOneOf,
  PaddockError,
  type SchemaError,
  serverStateError,
} from "@paddock/common";
import {
  callEgressPolicy,
  ExecdClient,
  type NetworkPolicy,
  type Sandbox,
  type SandboxOperations,
  type SandboxQuota,
  type TemplateCatalog,
  type Volume,
  type VolumeOperations,
  validateNetworkTarget,
} from "@paddock/runtime";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { type E2bTemplateBuilds, e2bTemplateRoutes } from "./templates.js";
import {
  createdSandbox,
  detailedSandbox,
  type E2bState,
  e2bState,
  listedSandbox,
  paddockStates,
  sandboxDomain,
  templateAliases,
  templateResources,
  type WireContext,
} from "./wire.js";

export interface E2bApiOptions {
  sandboxes: SandboxOperations;
  /** The volume registry: E2B's team volumes are the account's (decision 0192). */
  volumes: VolumeOperations;
  templates: TemplateCatalog;
  secretKey: string;
  publicUrl: () => string;
  /** The account an API key (or session token) belongs to, and the key's id; throws 401/403 otherwise. */
  authenticate(token: string | undefined): Promise<{ accountId: string; credential: string }>;
  /** Throws 402 when the account may not start or resume a sandbox now. */
  assertCanRun(accountId: string, action: "create" | "resume"): Promise<void>;
  /** What the account's plan lets it hold at once, checked as the sandbox is written. */
  quotaOf(accountId: string): Promise<SandboxQuota>;
  /** Counts a create against the key's and the account's rates; throws 429 `rate_limited` past them. */
  chargeCreate(accountId: string, credential: string): Promise<void>;
  /** The idle timeout and paused retention (seconds; null: never) the account's plan gives a sandbox. */
  lifecycleDefaults(accountId: string): Promise<{ idleTimeout: number | null; maxPaused: number | null }>;
  /** Accounts' template builds, for E2B's template builder (decision 0198); without them, no template routes. */
  templateBuilds?: E2bTemplateBuilds;
  /**
   * Records a sandbox created or deleted here in its account's audit log (decision 0204), with the
   * caller `authenticate` answered and the client's address; without it, nothing is recorded.
   */
  recordEvent?(
    caller: { accountId: string; credential: string },
    address: string,
    type: "sandbox.created" | "sandbox.deleted",
    sandboxId: string,
  ): Promise<void>;
}

/** How long pause and connect wait for the sandbox to settle: E2B's calls return when it has. */
const settleTimeoutMs = 120_000;

const SandboxParams = Type.Object({ sandboxID: Type.String({ minLength: 1, maxLength: 128 }) });
const Destinations = Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 1000 });
/** E2B's egress settings, the same at create (in `network`) and in a live update. */
const egressFields = {
  allowOut: Type.Optional(Destinations),
  denyOut: Type.Optional(Destinations),
  egressProxy: Type.Optional(Type.Unknown()),
  rules: Type.Optional(Type.Unknown()),
};
const Network = Type.Object({ ...egressFields, allowPublicTraffic: Type.Optional(Type.Boolean()) });
/** E2B's live network update: replaces the whole egress configuration; an omitted field clears. */
const NetworkUpdate = Type.Object({ ...egressFields, allow_internet_access: Type.Optional(Type.Boolean()) });
const NewSandbox = Type.Object({
  templateID: Type.String({ minLength: 1, maxLength: 128 }),
  timeout: Type.Optional(Type.Integer({ minimum: 0 })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
  envVars: Type.Optional(Type.Record(Type.String(), Type.String())),
  secure: Type.Optional(Type.Boolean()),
  allow_internet_access: Type.Optional(Type.Boolean()),
  network: Type.Optional(Network),
  autoPause: Type.Optional(Type.Boolean()),
  autoPauseMemory: Type.Optional(Type.Boolean()),
  autoResume: Type.Optional(Type.Object({ enabled: Type.Boolean() })),
  mcp: Type.Optional(Type.Unknown()),
  volumeMounts: Type.Optional(
    Type.Array(
      Type.Object({ name: Type.String({ maxLength: 256 }), path: Type.String({ maxLength: 4096 }) }),
      {
        maxItems: 16,
      },
    ),
  ),
});
const VolumeParams = Type.Object({ volumeID: Type.String({ minLength: 1, maxLength: 128 }) });
// The name's rule is the registry's, so a bad one is its `invalid_volume_name` as on every surface.
const NewVolume = Type.Object({ name: Type.String({ maxLength: 256 }) });
const Timeout = Type.Object({ timeout: Type.Integer({ minimum: 0 }) });
/** A connect's or resume's body: `memory: false` is the SDK's `onResume: "reboot"`; `autoPause` is deprecated. */
const Resume = Type.Object({
  timeout: Type.Optional(Type.Integer({ minimum: 0 })),
  memory: Type.Optional(Type.Boolean()),
  autoPause: Type.Optional(Type.Boolean()),
});
/** `memory: false` is the SDK's `pause({ keepMemory: false })`: the filesystem only. */
const Pause = Type.Optional(Type.Object({ memory: Type.Optional(Type.Boolean()) }));
const ListQuery = Type.Object({
  metadata: Type.Optional(Type.String({ maxLength: 8192 })),
  state: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  startedAfter: Type.Optional(Type.String({ format: "date-time" })),
  template: Type.Optional(Type.String({ maxLength: 128 })),
  order: Type.Optional(Type.Union([Type.Literal("asc"), Type.Literal("desc")])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  nextToken: Type.Optional(Type.String({ maxLength: 64 })),
});
const MetricsQuery = Type.Object({
  start: Type.Optional(Type.Integer({ minimum: 0 })),
  end: Type.Optional(Type.Integer({ minimum: 0 })),
});
const unsupportedEgress = "egress proxies and per-domain transform rules are not available on this server";
/** Kept out of Paddock's own OpenAPI document: this surface is E2B's, documented by E2B. */
const hidden = { hide: true } as const;

function invalid(message: string): never {
  throw new PaddockError(Errors.invalidRequest, message);
}

/** The API key of an E2B client: `X-API-KEY`, or an `Authorization: Bearer` token. */
function credentialOf(request: FastifyRequest): string | undefined {
  const key = request.headers["x-api-key"];
  if (typeof key === "string" && key) return key;
  return /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1];
}

/** E2B's `metadata` filter: `k=v&k2=v2`, each key and value URL-encoded once more. */
function metadataFilter(query: string | undefined): Record<string, string> | undefined {
  if (!query) return undefined;
  const filter: Record<string, string> = {};
  try {
    for (const [key, value] of new URLSearchParams(query))
      filter[decodeURIComponent(key)] = decodeURIComponent(value);
  } catch {
    invalid(invalidField("query.metadata", "must be URL-encoded key=value pairs"));
  }
  return filter;
}

function statesOf(state: string | string[] | undefined): E2bState[] {
  if (state === undefined) return ["running", "paused"];
  const names = [state].flat().flatMap((value) => value.split(","));
  for (const name of names)
    if (name !== "running" && name !== "paused")
      invalid(notOneOf("query.state", ["running", "paused"], name));
  return names as E2bState[];
}

/**
 * E2B's network settings as a Paddock egress policy: allowOut wins over denyOut, then the default.
 * `networkAt` is where the request held `network`'s fields (a create nests them, an update not).
 */
function networkPolicyOf(
  body: {
    allow_internet_access?: boolean;
    network?: { allowOut?: string[]; denyOut?: string[] };
  },
  networkAt = "body.network",
): NetworkPolicy | undefined {
  const allowOut = body.network?.allowOut ?? [];
  const denyOut = body.network?.denyOut ?? [];
  // Checked here, so a refusal names the field E2B's client sent (body.network.allowOut[1]).
  for (const [index, target] of allowOut.entries())
    validateNetworkTarget(target, `${networkAt}.allowOut[${index}]`);
  for (const [index, target] of denyOut.entries())
    validateNetworkTarget(target, `${networkAt}.denyOut[${index}]`);
  if (body.allow_internet_access !== false && allowOut.length === 0 && denyOut.length === 0) return undefined;
  const everything = (target: string) => target === "0.0.0.0/0";
  return {
    defaultAction: body.allow_internet_access === false || denyOut.some(everything) ? "deny" : "allow",
    egress: [
      ...allowOut.map((target) => ({ action: "allow" as const, target })),
      ...denyOut
        .filter((target) => !everything(target))
        .map((target) => ({ action: "deny" as const, target })),
    ],
  };
}

/** The offset a `nextToken` carries (opaque to clients). */
function offsetOf(token: string | undefined): number {
  if (token === undefined) return 0;
  const decoded = Buffer.from(token, "base64url").toString("utf8");
  if (!/^\d{1,9}$/.test(decoded)) invalid(invalidField("query.nextToken", "is not one this server issued"));
  return Number(decoded);
}

/**
 * E2B's REST API (specs/e2b/openapi.yml), the calls its SDKs make for sandboxes, over Paddock's
 * accounts, keys, quotas and runtime. Errors are E2B's `{code: <status>, message}`, which the SDKs
 * turn into their error classes.
 */
export const e2bApi: FastifyPluginAsyncTypebox<E2bApiOptions> = async (app, options) => {
  const { sandboxes, templates } = options;
  const context: WireContext = {
    secretKey: options.secretKey,
    get domain() {
      return sandboxDomain(options.publicUrl());
    },
    resources: (id) => templateResources(id ? templates.builtIn.get(id)?.resourceLimits : undefined),
  };

  app.setErrorHandler((thrown, request, reply) => {
    // The database away and the data disk full are the server's state, answered as the control
    // plane does (503, 507) with what to do, where any other fault says only "internal error".
    const error = serverStateError(thrown) ?? thrown;
    // A plan's limit is E2B's 429, which its SDKs raise as RateLimitError (E2B answers its
    // concurrent-sandbox limit so); without Retry-After, as waiting alone frees nothing.
    const status = isPaddockError(error)
      ? error.code === Errors.quotaExceeded.code
        ? 429
        : error.status
      : (error as { validation?: unknown }).validation
        ? 400
        : ((error as { statusCode?: number }).statusCode ?? 500);
    if (isPaddockError(error) && error.retryAfterSeconds !== undefined)
      reply.header("retry-after", String(error.retryAfterSeconds));
    if (status >= 500) request.log.error({ err: error }, "E2B API request failed");
    const { validation, validationContext } = error as {
      validation?: SchemaError[];
      validationContext?: string;
    };
    const message = validation
      ? describeSchemaErrors(validation, validationContext ?? "request")
      : status >= 500 && !isPaddockError(error)
        ? "internal error"
        : (error as Error).message;
    return reply.status(status).send({ code: status, message });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ code: 404, message: `no route ${request.method} ${request.url}` }),
  );
  app.get("/health", { schema: hidden }, async () => ({ status: "ok" }));

  const callers = new WeakMap<FastifyRequest, { accountId: string; credential: string }>();
  app.addHook("onRequest", async (request) => {
    if (request.routeOptions.url === "/e2b/health" || request.routeOptions.config.signedUrl) return;
    callers.set(request, await options.authenticate(credentialOf(request)));
  });
  const caller = (request: FastifyRequest) =>
    callers.get(request) as { accountId: string; credential: string };
  const owner = (request: FastifyRequest) => caller(request).accountId;

  /** The caller's sandbox as E2B sees it: one that ended (or failed) is not found. */
  const visible = async (request: FastifyRequest, id: string): Promise<Sandbox> => {
    const sandbox = await sandboxes.get(id, owner(request));
    if (!e2bState(sandbox)) throw new PaddockError(Errors.sandboxNotFound, `sandbox ${id} not found`);
    return sandbox;
  };

  /** Polls until the sandbox reaches `state`, or fails with what it became. */
  const settle = async (
    request: FastifyRequest,
    id: string,
    state: "Running" | "Paused",
  ): Promise<Sandbox> => {
    const deadline = Date.now() + settleTimeoutMs;
    for (;;) {
      const sandbox = await sandboxes.get(id, owner(request));
      if (sandbox.status.state === state) return sandbox;
      if (!e2bState(sandbox))
        throw new PaddockError(
          Errors.sandboxNotFound,
          `sandbox ${id} ended: ${sandbox.status.message ?? ""}`,
        );
      // Settled elsewhere: a pause or resume that failed left it where it was.
      if (sandbox.status.state === "Running" || sandbox.status.state === "Paused")
        throw new PaddockError(
          Errors.endpointUnavailable,
          `sandbox ${id} is ${sandbox.status.state}: ${sandbox.status.message ?? "it did not move"}`,
        );
      if (Date.now() > deadline)
        throw new PaddockError(Errors.endpointUnavailable, `sandbox ${id} did not settle`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  /** Sets the expiry to `timeout` seconds from now; `extendOnly` keeps a later one. */
  const expireIn = async (
    request: FastifyRequest,
    sandbox: Sandbox,
    timeout: number,
    extendOnly: boolean,
  ) => {
    const expiresAt = new Date(Date.now() + timeout * 1000);
    if (extendOnly && sandbox.expiresAt && Date.parse(sandbox.expiresAt) >= expiresAt.getTime()) return;
    await sandboxes.renew(sandbox.id, expiresAt, owner(request), { allowEarlier: true });
  };

  const create = async (request: FastifyRequest, body: typeof NewSandbox.static) => {
    if (body.mcp !== undefined)
      invalid(invalidField("body.mcp", "MCP gateways are not available on this server"));
    // E2B's rule: a filesystem-only snapshot is resumed only when asked (connect or resume).
    if (body.autoPauseMemory === false && body.autoResume?.enabled)
      invalid(
        invalidField(
          "body.autoResume",
          "cannot be enabled with autoPauseMemory: false; resume such a sandbox with connect",
        ),
      );
    if (body.network?.egressProxy !== undefined || body.network?.rules !== undefined)
      invalid(invalidField("body.network", unsupportedEgress));
    if (body.network?.allowPublicTraffic === true) {
      invalid(
        invalidField(
          "body.network.allowPublicTraffic",
          "sandbox ports are never public here: send e2b-traffic-access-token, or use Paddock's endpoint URLs",
        ),
      );
    }
    const template = templateAliases[body.templateID] ?? body.templateID;
    await templates.resolve(template, owner(request));
    await options.chargeCreate(owner(request), caller(request).credential);
    await options.assertCanRun(owner(request), "create");
    const networkPolicy = networkPolicyOf(body);
    // E2B's default: a paused sandbox wakes on traffic only when asked to.
    const autoResume = body.autoResume?.enabled ?? false;
    const defaults = await options.lifecycleDefaults(owner(request));
    const sandbox = await sandboxes.create({
      lifecycle: {
        onTimeout: body.autoPause ? "pause" : "kill",
        autoResume,
        keepMemory: body.autoPauseMemory ?? true,
        // The plan's idle pause only where traffic wakes the sandbox again: an E2B client that
        // never asked for that relies on it answering until the timeout it set (E2B's SDK
        // always sends one, so such a sandbox is never forgotten for long).
        idleTimeout: autoResume ? defaults.idleTimeout : null,
        maxPaused: defaults.maxPaused,
      },
      template,
      owner: owner(request),
      // E2B's default lifetime when a client sends none.
      timeout: body.timeout ?? 15,
      ...(body.envVars ? { env: body.envVars } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
      ...(networkPolicy ? { networkPolicy } : {}),
      ...(body.volumeMounts?.length
        ? {
            volumes: body.volumeMounts.map(({ name, path }) => ({
              name,
              mountPath: path,
              named: { name },
            })),
          }
        : {}),
      quota: await options.quotaOf(owner(request)),
    });
    await options.recordEvent?.(caller(request), request.ip, "sandbox.created", sandbox.id);
    return createdSandbox(sandbox, context, template === body.templateID ? undefined : body.templateID);
  };
  const createSchema = { ...hidden, body: NewSandbox };
  for (const path of ["/sandboxes", "/v2/sandboxes"]) {
    app.post(path, { schema: createSchema }, async (request, reply) =>
      reply.status(201).send(await create(request, request.body)),
    );
  }

  /** Every sandbox of the caller in `states` whose metadata matches, oldest first. */
  const listAll = async (request: FastifyRequest, states: E2bState[], metadata?: Record<string, string>) => {
    const found: Sandbox[] = [];
    for (let page = 1; ; page++) {
      const result = await sandboxes.list({
        owner: owner(request),
        states: states.flatMap((state) => paddockStates[state]),
        ...(metadata ? { metadata } : {}),
        page,
        pageSize: 200,
      });
      found.push(...result.items);
      if (!result.pagination.hasNextPage) break;
    }
    return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  };

  /** The sandboxes as E2B lists them, with the volumes each mounts. */
  const listed = async (sandboxes: Sandbox[]) => {
    const mounts = await options.volumes.mountsOf(sandboxes.map((sandbox) => sandbox.id));
    return sandboxes.map((sandbox) => listedSandbox(sandbox, context, mounts.get(sandbox.id)));
  };

  app.get("/sandboxes", { schema: { ...hidden, querystring: ListQuery } }, async (request) =>
    listed(await listAll(request, ["running"], metadataFilter(request.query.metadata))),
  );

  app.get("/v2/sandboxes", { schema: { ...hidden, querystring: ListQuery } }, async (request, reply) => {
    const query = request.query;
    const template = query.template ? (templateAliases[query.template] ?? query.template) : undefined;
    const startedAfter = query.startedAfter ? Date.parse(query.startedAfter) : undefined;
    let matching = (await listAll(request, statesOf(query.state), metadataFilter(query.metadata))).filter(
      (sandbox) =>
        (!template || sandbox.template === template) &&
        (startedAfter === undefined || Date.parse(sandbox.createdAt) >= startedAfter),
    );
    if (query.order !== "asc") matching = matching.reverse();
    const offset = offsetOf(query.nextToken);
    const limit = query.limit ?? 100;
    const page = matching.slice(offset, offset + limit);
    if (offset + limit < matching.length) {
      reply.header("x-next-token", Buffer.from(String(offset + limit)).toString("base64url"));
    }
    reply.header("x-total-running", String(matching.filter((s) => e2bState(s) === "running").length));
    return listed(page);
  });

  const one = { ...hidden, params: SandboxParams };
  app.get("/sandboxes/:sandboxID", { schema: one }, async (request) => {
    const sandbox = await visible(request, request.params.sandboxID);
    return detailedSandbox(sandbox, context, (await options.volumes.mountsOf([sandbox.id])).get(sandbox.id));
  });

  app.delete("/sandboxes/:sandboxID", { schema: one }, async (request, reply) => {
    await sandboxes.delete(request.params.sandboxID, owner(request));
    await options.recordEvent?.(caller(request), request.ip, "sandbox.deleted", request.params.sandboxID);
    return reply.status(204).send();
  });

  app.post("/sandboxes/:sandboxID/timeout", { schema: { ...one, body: Timeout } }, async (request, reply) => {
    const sandbox = await visible(request, request.params.sandboxID);
    await expireIn(request, sandbox, request.body.timeout, false);
    return reply.status(204).send();
  });

  app.put(
    "/sandboxes/:sandboxID/network",
    { schema: { ...one, body: NetworkUpdate } },
    async (request, reply) => {
      const { allowOut, denyOut, allow_internet_access, egressProxy, rules } = request.body;
      if (egressProxy !== undefined) invalid(invalidField("body.egressProxy", unsupportedEgress));
      if (rules !== undefined) invalid(invalidField("body.rules", unsupportedEgress));
      const sandbox = await visible(request, request.params.sandboxID);
      if (!sandbox.networkPolicy) {
        // Without settings at create, the sandbox has no egress sidecar to hold new ones.
        return reply.status(409).send({
          code: 409,
          message: `sandbox ${sandbox.id} was created without network settings, so its egress cannot be changed; create it with allowInternetAccess or network to change them later`,
        });
      }
      if (sandbox.status.state !== "Running")
        return reply.status(409).send({ code: 409, message: `sandbox ${sandbox.id} is not running` });
      const policy = networkPolicyOf(
        {
          ...(allow_internet_access === undefined ? {} : { allow_internet_access }),
          network: { ...(allowOut ? { allowOut } : {}), ...(denyOut ? { denyOut } : {}) },
        },
        "body",
      ) ?? { defaultAction: "allow", egress: [] };
      await callEgressPolicy(sandboxes, sandbox, owner(request), "PUT", policy);
      return reply.status(204).send();
    },
  );

  app.post(
    "/sandboxes/:sandboxID/refreshes",
    {
      schema: {
        ...one,
        body: Type.Optional(Type.Object({ duration: Type.Optional(Type.Integer({ minimum: 0 })) })),
      },
    },
    async (request, reply) => {
      const sandbox = await visible(request, request.params.sandboxID);
      await expireIn(request, sandbox, request.body?.duration ?? 60, true);
      return reply.status(204).send();
    },
  );

  /**
   * Pauses and waits until it is: in memory, or (`toDisk`) its filesystem only, which E2B calls a
   * pause without memory. A failed pause is answered with where the sandbox was left.
   */
  const pauseAndWait = async (request: FastifyRequest, id: string, toDisk: boolean): Promise<void> => {
    await sandboxes.pause(id, owner(request), toDisk ? { to: "disk", keepMemory: false } : {});
    const sandbox = await settle(request, id, "Paused");
    if (toDisk && sandbox.pause?.to !== "disk")
      throw new PaddockError(
        Errors.endpointUnavailable,
        `sandbox ${id} could not be paused to disk: ${sandbox.status.message ?? "it stayed in memory"}`,
      );
  };

  app.post("/sandboxes/:sandboxID/pause", { schema: { ...one, body: Pause } }, async (request, reply) => {
    const toDisk = request.body?.memory === false;
    let sandbox = await visible(request, request.params.sandboxID);
    if (sandbox.status.state === "Pausing") sandbox = await settle(request, sandbox.id, "Paused");
    // Paused in memory, a pause without memory still moves it to disk; otherwise it is E2B's 409.
    const inMemory = sandbox.status.state === "Paused" && sandbox.pause?.to !== "disk";
    if (e2bState(sandbox) === "paused" && !(toDisk && inMemory)) {
      return reply.status(409).send({ code: 409, message: `sandbox ${sandbox.id} is already paused` });
    }
    await pauseAndWait(request, sandbox.id, toDisk);
    return reply.status(204).send();
  });

  /**
   * Resumes a paused sandbox (waiting until it runs) and sets its lifetime; 201 when it resumed.
   * `reboot` (E2B's `memory: false`) resumes it from its filesystem only, its processes started anew.
   */
  const connect = async (
    request: FastifyRequest,
    id: string,
    body: typeof Resume.static,
    resumeOnly: boolean,
  ) => {
    let sandbox = await visible(request, id);
    const resumed = e2bState(sandbox) === "paused";
    if (resumed) {
      await options.assertCanRun(owner(request), "resume");
      if (sandbox.status.state === "Pausing") sandbox = await settle(request, id, "Paused");
      const fromFilesystem = sandbox.pause?.to === "disk" && !sandbox.pause.memoryPreserved;
      if (body.memory === false && !fromFilesystem) await pauseAndWait(request, id, true);
      sandbox = await sandboxes.wake(id, owner(request));
    } else if (resumeOnly) {
      throw new PaddockError(Errors.invalidStateTransition, `sandbox ${id} is already running`);
    } else if (sandbox.status.state !== "Running") {
      sandbox = await settle(request, id, "Running");
    }
    // A resume without a timeout runs at least E2B's default 15 s (its own timeout, re-armed, if longer).
    if (body.timeout !== undefined) await expireIn(request, sandbox, body.timeout, !resumed);
    else if (resumed) await expireIn(request, sandbox, 15, true);
    return { resumed, body: createdSandbox(sandbox, context) };
  };
  for (const path of ["/sandboxes/:sandboxID/connect", "/v2/sandboxes/:sandboxID/connect"]) {
    app.post(path, { schema: { ...one, body: Resume } }, async (request, reply) => {
      const { resumed, body } = await connect(request, request.params.sandboxID, request.body, false);
      return reply.status(resumed ? 201 : 200).send(body);
    });
  }
  app.post("/sandboxes/:sandboxID/resume", { schema: { ...one, body: Resume } }, async (request, reply) => {
    const { body } = await connect(request, request.params.sandboxID, request.body, true);
    return reply.status(201).send(body);
  });

  app.get(
    "/sandboxes/:sandboxID/metrics",
    { schema: { ...one, querystring: MetricsQuery } },
    async (request) => {
      const sandbox = await visible(request, request.params.sandboxID);
      // Paddock keeps no history of a sandbox's usage: the answer is one sample, taken now, when
      // now lies in the window asked for (seconds; by default from the sandbox's start to now).
      const now = Math.floor(Date.now() / 1000);
      const start = Math.max(request.query.start ?? 0, Math.floor(Date.parse(sandbox.createdAt) / 1000));
      const end = request.query.end ?? Number.MAX_SAFE_INTEGER;
      if (request.query.start !== undefined && request.query.end !== undefined && request.query.start > end)
        invalid(`start (${request.query.start}) is after end (${end})`);
      if (sandbox.status.state !== "Running" || start > now || end < start) return [];
      const execd = await ExecdClient.of(sandboxes, sandbox.id, owner(request));
      const sample = await execd.envdMetrics(AbortSignal.timeout(10_000));
      const at = new Date((sample.ts ?? now) * 1000);
      const seconds = Math.floor(at.getTime() / 1000);
      if (seconds < start || seconds > end) return [];
      return [
        {
          timestamp: at.toISOString(),
          timestampUnix: Math.floor(at.getTime() / 1000),
          cpuCount: sample.cpu_count ?? 0,
          cpuUsedPct: sample.cpu_used_pct ?? 0,
          memUsed: sample.mem_used ?? 0,
          memTotal: sample.mem_total ?? 0,
          memCache: sample.mem_cache ?? 0,
          diskUsed: sample.disk_used ?? 0,
          diskTotal: sample.disk_total ?? 0,
        },
      ];
    },
  );

  // E2B's team volumes: the account's volumes, of the operator's default size (E2B's create names
  // none). The token is for E2B's volume content API, which this server does not offer.
  const volumeAndToken = (volume: Volume) => ({ volumeID: volume.id, name: volume.name, token: "" });
  app.get("/volumes", { schema: hidden }, async (request) =>
    (await options.volumes.list(owner(request))).map((volume) => ({
      volumeID: volume.id,
      name: volume.name,
    })),
  );
  app.post("/volumes", { schema: { ...hidden, body: NewVolume } }, async (request, reply) => {
    const volume = await options.volumes.create({
      owner: owner(request),
      name: request.body.name,
      quota: await options.quotaOf(owner(request)),
    });
    return reply.status(201).send(volumeAndToken(volume));
  });
  const oneVolume = { ...hidden, params: VolumeParams };
  app.get("/volumes/:volumeID", { schema: oneVolume }, async (request) =>
    volumeAndToken(await options.volumes.get(request.params.volumeID, owner(request))),
  );
  app.delete("/volumes/:volumeID", { schema: oneVolume }, async (request, reply) => {
    await options.volumes.delete(request.params.volumeID, owner(request));
    return reply.status(204).send();
  });

  // E2B's template builder, where the server builds templates.
  const { templateBuilds } = options;
  if (templateBuilds) {
    await app.register(e2bTemplateRoutes, {
      ...templateBuilds,
      catalog: templates,
      secretKey: options.secretKey,
      publicUrl: options.publicUrl,
      owner,
    });
  }
};
