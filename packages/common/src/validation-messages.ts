import { distance } from "fastest-levenshtein";

/**
 * The one wording of a refused request's fields, for every surface (control plane, `/v1`, E2B,
 * execd, the egress sidecar): `<where>: <what is wrong>`, where `<where>` is the part of the request
 * and the JSON path inside it (`body.resources.cpu`, `query.limit`, `body.egress[2]`), and an
 * unknown name gets the known one it is close to (`did you mean "timeoutMs"?`).
 */

/** The parts of a request, as named in messages. */
export type RequestPart = "body" | "query" | "path" | "headers";

/** Fastify's names for a request's parts (`validationContext`) to ours. */
const partNames: Record<string, RequestPart> = {
  body: "body",
  querystring: "query",
  params: "path",
  headers: "headers",
};

/** A segment written after a dot: plain names only, so a path reads as JavaScript would. */
const plainName = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Longest name a message repeats: a client's names come back to it, but not a megabyte of them. */
const shownLength = 100;

/** A client's name or value as JSON text, cut to `shownLength` characters. */
function quoted(value: unknown): string {
  if (typeof value !== "string" || value.length <= shownLength) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, shownLength))}…`;
}

/** `base` followed by property names and array indexes: `body.binds[0].source`, `headers["x-id"]`. */
export function fieldPath(base: string, ...segments: ReadonlyArray<string | number>): string {
  let path = base;
  for (const segment of segments) {
    if (typeof segment === "number") path += `[${segment}]`;
    else if (plainName.test(segment) && segment.length <= shownLength) path += `.${segment}`;
    else path += `[${quoted(segment)}]`;
  }
  return path;
}

/** A name without case or separators, so `timeout_ms`, `TimeoutMs` and `timeout-ms` meet `timeoutMs`. */
const folded = (name: string) => name.toLowerCase().replace(/[-_.\s]/g, "");

/**
 * The known name `name` was most likely meant to be, if any: one that differs only in case or
 * separators, else the nearest by edit distance when that distance is at most a third of the
 * longer name (a typo or a missing unit suffix such as `timeout` → `timeoutMs`, but never `id` →
 * `ip`). Ties go to the first known name, so the answer follows the schema's order.
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  // No known name is this long: a megabyte-long name is not worth measuring against each one.
  if (name.length > shownLength) return undefined;
  const wanted = folded(name);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    if (candidate === name) continue;
    const other = folded(candidate);
    const apart = distance(wanted, other);
    if (apart > Math.floor(Math.max(wanted.length, other.length) / 3)) continue;
    if (apart < bestDistance) {
      best = candidate;
      bestDistance = apart;
    }
  }
  return best;
}

const suggestion = (meant: string | undefined) => (meant === undefined ? "" : `; did you mean "${meant}"?`);

/** `body.timeout: unknown property "timeout"; did you mean "timeoutMs"?` */
export function unknownProperty(where: string, name: string, known: Iterable<string> = []): string {
  return `${fieldPath(where, name)}: unknown property ${quoted(name)}${suggestion(closestName(name, known))}`;
}

/**
 * `body: missing required property "command"`; when the object holds a name close to the missing
 * one (`given`), it says so: `...; did you mean "target" instead of "taget"?`.
 */
export function missingProperty(where: string, name: string, given: Iterable<string> = []): string {
  let misspelt: string | undefined;
  for (const key of given) if (misspelt === undefined && closestName(key, [name]) === name) misspelt = key;
  const hint = misspelt === undefined ? "" : `; did you mean "${name}" instead of ${quoted(misspelt)}?`;
  return `${where}: missing required property ${JSON.stringify(name)}${hint}`;
}

/** `body.memoryMb: must be integer` */
export function invalidField(where: string, problem: string): string {
  return `${where}: ${problem}`;
}

/** `body.profile: must be one of "strict", "balanced"; did you mean "strict"?` */
export function notOneOf(where: string, allowed: readonly unknown[], given?: unknown): string {
  const names = allowed.filter((value): value is string => typeof value === "string");
  const meant = typeof given === "string" ? closestName(given, names) : undefined;
  return `${where}: must be one of ${allowed.map(quoted).join(", ")}${suggestion(meant)}`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The names of an object schema's declared properties. */
function declaredProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
}

/** What an Ajv error object holds that is read here (`verbose: true` adds `parentSchema` and `data`). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: unknown;
  data?: unknown;
}

/** A JSON Pointer (`/resources/cpu`, `/binds/0`) as a path below `part`. */
function pathOf(part: string, pointer: string): string {
  const segments = pointer
    .split("/")
    .slice(1)
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
  return fieldPath(part, ...segments);
}

/** `a`, `a or b`, `a, b or c`. */
const oneList = (items: readonly string[]) =>
  items.length === 1 ? items[0] : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;

/** One schema error in the common wording. */
function describeOne(part: string, error: SchemaError): string {
  const where = pathOf(part, error.instancePath);
  switch (error.keyword) {
    case "additionalProperties":
      return unknownProperty(
        where,
        String(error.params.additionalProperty),
        declaredProperties(error.parentSchema),
      );
    case "unevaluatedProperties":
      return unknownProperty(
        where,
        String(error.params.unevaluatedProperty),
        declaredProperties(error.parentSchema),
      );
    case "required": {
      // Only names the schema does not declare can be a misspelling of the missing one.
      const declared = new Set(declaredProperties(error.parentSchema));
      const given = isObject(error.data) ? Object.keys(error.data).filter((key) => !declared.has(key)) : [];
      return missingProperty(where, String(error.params.missingProperty), given);
    }
    case "enum":
      return notOneOf(where, error.params.allowedValues as unknown[], error.data);
    case "const":
      return notOneOf(where, [error.params.allowedValue], error.data);
    case "type":
      return invalidField(where, `must be ${oneList(String(error.params.type).split(","))}`);
    case "propertyNames":
      return invalidField(where, `property name ${quoted(error.params.propertyName)} is not allowed`);
    default:
      return invalidField(where, error.message ?? `fails the "${error.keyword}" rule`);
  }
}

/**
 * The alternatives of an `anyOf`/`oneOf` that all failed on the value itself: allowed constants and
 * types read as one list (`must be one of "a", "b"`, `must be string or null`). Undefined when a
 * branch failed deeper inside the value; that branch's own error says more.
 */
function describeAlternatives(part: string, alternatives: SchemaError[], at: string): string | undefined {
  if (alternatives.length === 0 || alternatives.some((error) => error.instancePath !== at)) return undefined;
  const values: unknown[] = [];
  const types: string[] = [];
  for (const error of alternatives) {
    if (error.keyword === "const") values.push(error.params.allowedValue);
    else if (error.keyword === "enum") values.push(...(error.params.allowedValues as unknown[]));
    else if (error.keyword === "type") types.push(...String(error.params.type).split(","));
    else return undefined;
  }
  const where = pathOf(part, at);
  if (types.length === 0) return notOneOf(where, values, alternatives[0]?.data);
  return invalidField(
    where,
    `must be ${oneList([...values.map((value) => JSON.stringify(value)), ...types])}`,
  );
}

/**
 * The message for a request refused by its schema. `errors` is Ajv's list for one validation,
 * `context` the part it checked (Fastify's `body`, `querystring`, `params`, `headers`). The first
 * error is described; a failed `anyOf` is described by its alternatives or its deepest branch.
 */
export function describeSchemaErrors(errors: readonly SchemaError[], context: string): string {
  const part = partNames[context] ?? context;
  const union = errors.find((error) => error.keyword === "anyOf" || error.keyword === "oneOf");
  if (union === undefined) {
    const [first] = errors;
    return first ? describeOne(part, first) : invalidField(part, "is not valid");
  }
  const branches = errors.filter(
    (error) => error !== union && error.schemaPath.startsWith(`${union.schemaPath}/`),
  );
  const summary = describeAlternatives(part, branches, union.instancePath);
  if (summary !== undefined) return summary;
  const deepest = branches.reduce(
    (best, error) => (error.instancePath.length > best.instancePath.length ? error : best),
    branches[0] ?? union,
  );
  return describeOne(part, deepest);
}
