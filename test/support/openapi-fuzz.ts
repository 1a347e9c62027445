import { readFileSync } from "node:fs";
import { type Agent, request as httpRequest } from "node:http";
import { Writable } from "node:stream";
import fc from "fast-check";
import { parse } from "yaml";

// Requests generated from an OpenAPI document: for every operation, its path parameters, query,
// headers and body, both as the schema allows them and as a hostile client sends them. The
// runner sends each one over raw HTTP (no URL normalization, so `..` and bad escapes arrive as
// written) and checks the answer with what the surface promises.

export type Schema = Record<string, unknown>;
type Document = { paths: Record<string, Record<string, unknown>>; components?: Record<string, unknown> };

export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: Schema;
}

export interface Operation {
  /** `METHOD /path/{param}`, as the document writes the path. */
  id: string;
  method: string;
  path: string;
  parameters: Parameter[];
  /** The first content type the document names for the body, with its schema. */
  body?: { contentType: string; schema: Schema };
  /** Statuses the document lists for the operation. */
  responses: string[];
}

const methods = ["get", "post", "put", "patch", "delete"];

/** A JSON or YAML OpenAPI document. */
export function loadDocument(file: string): Document {
  const text = readFileSync(file, "utf8");
  return (file.endsWith(".json") ? JSON.parse(text) : parse(text)) as Document;
}

/** Follows local `$ref`s (`#/components/...`); a document's only kind. */
export function resolve(document: Document, schema: unknown): Schema {
  let current = schema as Schema | undefined;
  for (let hops = 0; current && typeof current.$ref === "string" && hops < 20; hops++) {
    const path = (current.$ref as string).replace(/^#\//, "").split("/");
    current = path.reduce<unknown>(
      (node, key) =>
        (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, "/").replace(/~0/g, "~")],
      document,
    ) as Schema | undefined;
  }
  return current ?? {};
}

/** Every operation of the document, path-level parameters merged into each. */
export function operationsOf(document: Document): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const shared = ((item.parameters as unknown[]) ?? []).map((p) => resolve(document, p));
    for (const method of methods) {
      const operation = item[method] as Record<string, unknown> | undefined;
      if (!operation) continue;
      const own = ((operation.parameters as unknown[]) ?? []).map((p) => resolve(document, p));
      const byKey = new Map<string, Schema>();
      for (const parameter of [...shared, ...own]) byKey.set(`${parameter.in}:${parameter.name}`, parameter);
      const parameters = [...byKey.values()].map((p) => ({
        name: p.name as string,
        in: p.in as Parameter["in"],
        required: p.required === true || p.in === "path",
        schema: resolve(document, p.schema ?? { type: "string" }),
      }));
      const requestBody = resolve(document, operation.requestBody);
      const content = (requestBody.content ?? {}) as Record<string, { schema?: unknown }>;
      const contentType = Object.keys(content)[0];
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters,
        ...(contentType
          ? { body: { contentType, schema: resolve(document, content[contentType]?.schema ?? {}) } }
          : {}),
        responses: Object.keys((operation.responses as object) ?? {}),
      });
    }
  }
  return operations;
}

/** Strings a hostile client sends where an id, a name, a path or a number is expected. */
export const hostileStrings: readonly string[] = [
  "",
  " ",
  "../../etc/passwd",
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
  "....//....//etc/passwd",
  "/etc/passwd",
  "/proc/self/environ",
  "a\u0000b",
  "\u0000",
  "\ud800",
  "x\udc00y",
  "\uffff\ufffe",
  "\u202e\ufeff",
  "1e308",
  "-1",
  "0",
  "18446744073709551616",
  "9007199254740993",
  "NaN",
  "Infinity",
  "-0",
  "0x10",
  "null",
  "true",
  "[]",
  "{}",
  "' OR '1'='1",
  "$(id)",
  "`id`",
  "%",
  "%zz",
  "%FF",
  "%ED%A0%80",
  "<script>",
  "x".repeat(300),
  "sbx_does_not_exist",
  "00000000-0000-0000-0000-000000000000",
];

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);

/** Values of the wrong type, or of the right type but out of every sensible range. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(1e308, -1e308, -1, 0, 2 ** 64, -(2 ** 63), 0.5, Number.MAX_SAFE_INTEGER + 2),
  fc.constantFrom(null, true, false, [], {}, [null], { "": null }, JSON.parse('{"__proto__":{"x":1}}')),
  fc.jsonValue({ maxDepth: 2 }),
);

/** A value the schema allows (patterns aside: strings are random text within the length bounds). */
export function schemaValue(document: Document, raw: unknown, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw);
  if (depth > 4) return fc.constant(null);
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  for (const key of ["oneOf", "anyOf"] as const) {
    const options = schema[key] as unknown[] | undefined;
    if (Array.isArray(options) && options.length > 0)
      return fc.oneof(...options.map((option) => schemaValue(document, option, depth + 1)));
  }
  if (Array.isArray(schema.allOf)) {
    const merged: Schema = { type: "object", properties: {}, required: [] };
    for (const part of schema.allOf.map((p) => resolve(document, p))) {
      Object.assign(merged.properties as object, part.properties ?? {});
      (merged.required as unknown[]).push(...((part.required as unknown[]) ?? []));
      if (part.type && part.type !== "object") merged.type = part.type;
    }
    return schemaValue(document, merged, depth + 1);
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  const type = types.find((t) => t !== "null") ?? (schema.properties ? "object" : undefined);
  switch (type) {
    case "string":
      return stringOf(schema);
    case "integer": {
      const min = typeof schema.minimum === "number" ? schema.minimum : -10;
      const max = typeof schema.maximum === "number" ? schema.maximum : min + 1000;
      return fc.integer({
        min: Math.ceil(min),
        max: Math.max(Math.ceil(min), Math.floor(Math.min(max, 2 ** 31))),
      });
    }
    case "number": {
      const min = typeof schema.minimum === "number" ? schema.minimum : -1000;
      const max = typeof schema.maximum === "number" ? schema.maximum : min + 1000;
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case "boolean":
      return fc.boolean();
    case "array": {
      const minLength = Math.min(Number(schema.minItems ?? 0), 3);
      return fc.array(schemaValue(document, schema.items ?? {}, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, Math.min(Number(schema.maxItems ?? 3), 3)),
      });
    }
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const required = ((schema.required as string[]) ?? []).filter((name) => name in properties);
      const record = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, property]) => [
            name,
            schemaValue(document, property, depth + 1),
          ]),
        ),
        { requiredKeys: required },
      );
      const extra = schema.additionalProperties;
      if (extra && typeof extra === "object" && Object.keys(properties).length === 0)
        return fc.dictionary(
          fc.string({ minLength: 1, maxLength: 10 }),
          schemaValue(document, extra, depth + 1),
          {
            maxKeys: 3,
          },
        );
      return record;
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  switch (schema.format) {
    case "date-time":
      return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
    case "uuid":
      return fc.uuid();
    case "email":
      return fc.emailAddress();
    case "uri":
    case "url":
      return fc.webUrl();
  }
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Math.max(minLength, Math.min(Number(schema.maxLength ?? 24), 64));
  return fc.string({ minLength, maxLength });
}

/** What the test knows of the world it fuzzes: real ids and credentials to mix in. */
export interface FuzzContext {
  /** Real values for a path, query or body field of that name (a live sandbox's id, say). */
  known?: Record<string, string[]>;
  /** The credential headers a real client of the surface sends, and their header names. */
  credentials: Record<string, string>;
  /** Headers every request carries as they are (routing, say), apart from the credentials fuzzed. */
  fixedHeaders?: Record<string, string>;
}

export interface FuzzRequest {
  method: string;
  /** The path and query, escaped as sent. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** How the request was made, for failure messages. */
  note: string;
  /** The connection pool to send it on (Node's global keep-alive agent otherwise). */
  agent?: Agent;
}

/**
 * Escapes a value for a URL: percent-encoded UTF-8, with a lone surrogate as the three bytes it
 * would take (`%ED%A0%80`), which are not UTF-8, so the server meets that too.
 */
export function urlEscape(value: string): string {
  let out = "";
  for (const char of value) {
    const code = char.codePointAt(0) as number;
    if (code >= 0xd800 && code <= 0xdfff)
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    else out += encodeURIComponent(char);
  }
  return out;
}

/** A parameter value: a real one, one its schema allows, or a hostile one (raw, unescaped, at times). */
function parameterValue(document: Document, parameter: Parameter, known: string[]) {
  const escaped = fc.oneof(
    { weight: 2, arbitrary: schemaValue(document, parameter.schema).map((value) => String(value)) },
    { weight: 3, arbitrary: hostileString },
  );
  const options = [
    { weight: 4, arbitrary: escaped.map(urlEscape) },
    { weight: 1, arbitrary: fc.constantFrom("..", "%2e%2e", "..%2f..%2f", "%00", "%ZZ", "%C0%AF") },
  ];
  if (known.length > 0) options.push({ weight: 5, arbitrary: fc.constantFrom(...known).map(urlEscape) });
  return fc.oneof(...options);
}

/** Invalid UTF-8, placed inside a JSON string of the body. */
const invalidUtf8 = fc.constantFrom(
  Buffer.from([0xff]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
);

const megabyte = "x".repeat(1024 * 1024);

/** The body of a request: JSON the schema allows, or one of the ways a client gets it wrong. */
function bodyFor(document: Document, operation: Operation, known: Record<string, string[]>) {
  const schema = operation.body?.schema ?? {};
  const valid = fc
    .tuple(schemaValue(document, schema), fc.nat(), fc.boolean())
    .map(([value, pick, use]) => (use ? withKnown(value, known, pick) : value));
  const properties = Object.keys((resolve(document, schema).properties ?? {}) as object);
  const required = (resolve(document, schema).required as string[] | undefined) ?? [];
  const json = (value: unknown) => Buffer.from(JSON.stringify(value) ?? "null");
  type Body = { body?: Buffer; note: string };
  const shapes: Array<{ weight: number; arbitrary: fc.Arbitrary<Body> }> = [
    { weight: 6, arbitrary: valid.map((value) => ({ body: json(value), note: "valid" })) },
    { weight: 1, arbitrary: fc.constant({ note: "no body" }) },
    { weight: 1, arbitrary: fc.constant({ body: Buffer.alloc(0), note: "empty body" }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          valid,
          fc.constantFrom("{", '{"a":', "[1,", "nul", '{"a":1}}', "\u0000", "{'a':1}", '{"a":01}'),
        )
        .map(([value, broken]) => ({
          body: Buffer.from((JSON.stringify(value) ?? "").slice(0, 8) + broken),
          note: "malformed JSON",
        })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, invalidUtf8).map(([value, bytes]) => {
        const text = JSON.stringify(value) ?? "null";
        const quote = text.indexOf('"');
        const at = quote >= 0 ? quote + 1 : 0;
        const body =
          quote >= 0
            ? Buffer.concat([Buffer.from(text.slice(0, at)), bytes, Buffer.from(text.slice(at))])
            : Buffer.concat([Buffer.from('"'), bytes, Buffer.from('"')]);
        return { body, note: "invalid UTF-8" };
      }),
    },
    { weight: 2, arbitrary: hostileValue.map((value) => ({ body: json(value), note: "wrong JSON type" })) },
  ];
  if (properties.length > 0) {
    const field = fc.constantFrom(...properties);
    shapes.push(
      {
        weight: 4,
        arbitrary: fc.tuple(valid, field, hostileValue).map(([value, name, hostile]) => ({
          body: json({ ...(value as object), [name]: hostile }),
          note: `hostile ${name}`,
        })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(valid, field).map(([value, name]) => ({
          body: Buffer.from(
            JSON.stringify({ ...(value as object), [name]: "P" }).replace('"P"', '"\\ud800"'),
          ),
          note: `lone surrogate in ${name}`,
        })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(valid, field).map(([value, name]) => ({
          body: json({ ...(value as object), [name]: megabyte }),
          note: `1 MB ${name}`,
        })),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(valid, fc.string({ minLength: 1, maxLength: 12 }), hostileValue)
          .map(([value, name, extra]) => ({
            body: json({ ...(value as object), [`x-${name}`]: extra }),
            note: "extra field",
          })),
      },
    );
  }
  if (required.length > 0)
    shapes.push({
      weight: 2,
      arbitrary: fc.tuple(valid, fc.constantFrom(...required)).map(([value, name]) => {
        const { [name]: _dropped, ...rest } = value as Record<string, unknown>;
        return { body: json(rest), note: `missing ${name}` };
      }),
    });
  return fc.oneof(...shapes);
}

/** Puts real values where the body has a field of a known name (a sandbox id, a path). */
function withKnown(value: unknown, known: Record<string, string[]>, pick: number): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const out = { ...(value as Record<string, unknown>) };
  for (const [name, values] of Object.entries(known))
    if (name in out && values.length > 0) out[name] = values[pick % values.length];
  return out;
}

/** Credentials as they come: the real ones, none, wrong ones, malformed ones. */
function credentialsFor(credentials: Record<string, string>) {
  const names = Object.keys(credentials);
  const wrong = (value: string) =>
    fc.constantFrom(
      `${value}x`,
      value.slice(0, -1),
      value.replace(/^Bearer /, ""),
      `Bearer ${value}`,
      "Bearer",
      "Basic Og==",
      "Bearer null",
      "x".repeat(4000),
      " ",
      value.toUpperCase(),
    );
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant({ headers: credentials, note: "real credentials" }) },
    { weight: 1, arbitrary: fc.constant({ headers: {}, note: "no credentials" }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          ...names.map((name) =>
            fc.oneof(
              wrong(credentials[name] as string),
              fc.string({
                unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
                maxLength: 60,
              }),
            ),
          ),
        )
        .map((values) => ({
          headers: Object.fromEntries(names.map((name, i) => [name, values[i] as string])),
          note: "wrong credentials",
        })),
    },
  );
}

/** Requests for one operation: path, query, headers and body from its definition, real and hostile. */
export function requestsFor(
  document: Document,
  operation: Operation,
  context: FuzzContext,
): fc.Arbitrary<FuzzRequest> {
  const known = context.known ?? {};
  const pathParameters = operation.parameters.filter((p) => p.in === "path");
  const queryParameters = operation.parameters.filter((p) => p.in === "query");
  const headerParameters = operation.parameters.filter(
    (p) => p.in === "header" && !(p.name.toLowerCase() in lower(context.credentials)),
  );
  const path = fc
    .tuple(...pathParameters.map((p) => parameterValue(document, p, known[p.name] ?? [])))
    .map((values) =>
      pathParameters.reduce(
        (result, p, i) => result.replace(`{${p.name}}`, values[i] as string),
        operation.path,
      ),
    );
  const query = fc
    .tuple(
      ...queryParameters.map((p) =>
        p.required
          ? parameterValue(document, p, known[p.name] ?? []).map((value) => `${p.name}=${value}`)
          : fc.option(
              parameterValue(document, p, known[p.name] ?? []).map((value) => `${p.name}=${value}`),
              { freq: 2 },
            ),
      ),
      fc.option(fc.constantFrom("unknown=1", "a=%FF", "%ZZ=1", "page=1e308", "x[]=1&x[]=2", "&&=&"), {
        freq: 4,
      }),
    )
    .map((parts) => parts.filter((part) => part !== null).join("&"));
  const headers = fc.tuple(
    ...headerParameters.map((p) =>
      fc.option(
        fc
          .oneof(schemaValue(document, p.schema).map(String), fc.constantFrom(...hostileStrings))
          .map((value) => [p.name, asciiHeader(value)] as const),
        { freq: 3 },
      ),
    ),
  );
  const contentType = operation.body?.contentType ?? "application/json";
  const body = operation.body
    ? bodyFor(document, operation, known)
    : fc.oneof(
        { weight: 4, arbitrary: fc.constant({ note: "no body" } as { body?: Buffer; note: string }) },
        {
          weight: 1,
          arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({
            body: Buffer.from(JSON.stringify(value) ?? "null"),
            note: "unexpected body",
          })),
        },
      );
  const type = fc.oneof(
    { weight: 8, arbitrary: fc.constant(contentType) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "application/json; charset=latin1",
        "garbage",
        "",
      ),
    },
  );
  // Connect's streaming calls carry their message in an envelope: flags, length, then the JSON.
  const enveloped = contentType === "application/connect+json";
  return fc
    .tuple(path, query, headers, credentialsFor(context.credentials), body, type, fc.nat(9))
    .map(([target, search, headerPairs, credentials, sent, typeValue, wrap]) => {
      if (enveloped && sent.body && wrap > 0) {
        const head = Buffer.alloc(5);
        head.writeUInt8(wrap === 1 ? 0xff : 0, 0);
        head.writeUInt32BE(wrap === 2 ? 2 ** 32 - 1 : sent.body.length, 1);
        sent = { body: Buffer.concat([head, sent.body]), note: `${sent.note}, enveloped` };
      }
      const headerValues: Record<string, string> = { ...context.fixedHeaders, ...credentials.headers };
      for (const pair of headerPairs) if (pair) headerValues[pair[0]] = pair[1];
      if (sent.body !== undefined && typeValue) headerValues["content-type"] = typeValue;
      return {
        method: operation.method,
        target: search ? `${target}?${search}` : target,
        headers: headerValues,
        ...(sent.body !== undefined ? { body: sent.body } : {}),
        note: `${credentials.note}, ${sent.note}, content-type ${typeValue || "none"}`,
      };
    });
}

function lower(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key.toLowerCase(), value]));
}

/** Header values travel as visible ASCII; anything else is escaped as in a URL. */
function asciiHeader(value: string): string {
  return urlEscape(value).slice(0, 2000);
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  /** The body, or the part read of a stream before it was let go. */
  text: string;
}

const streaming = /text\/event-stream|ndjson|application\/connect\+|octet-stream/;

/**
 * Sends one request over plain HTTP/1.1 and reads the answer, all within `timeoutMs`: a hang
 * is a rejection. A stream's answer is taken once its head has arrived.
 */
export function send(base: string, request: FuzzRequest, timeoutMs = 10_000): Promise<FuzzAnswer> {
  const url = new URL(base);
  const prefix = url.pathname.replace(/\/$/, "");
  return new Promise((resolvePromise, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: `${prefix}${request.target}`,
        headers: {
          ...request.headers,
          ...(request.body ? { "content-length": String(request.body.length) } : {}),
        },
        signal: AbortSignal.timeout(timeoutMs),
        ...(request.agent ? { agent: request.agent } : {}),
      },
      (response) => {
        const contentType = String(response.headers["content-type"] ?? "");
        const status = response.statusCode ?? 0;
        if (status < 300 && streaming.test(contentType)) {
          response.destroy();
          resolvePromise({ status, contentType, text: "" });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= 4 * 1024 * 1024) chunks.push(chunk);
        });
        response.on("end", () =>
          resolvePromise({ status, contentType, text: Buffer.concat(chunks).toString() }),
        );
        response.on("error", (error) =>
          reject(new Error(`${request.method} ${request.target}: ${error.message}`)),
        );
      },
    );
    outgoing.on("error", (error) =>
      reject(new Error(`${request.method} ${request.target} (${request.note}): ${error.message}`)),
    );
    outgoing.end(request.body);
  });
}

/** What a surface promises of its answers, and how the test checks that it lives on. */
export interface Surface {
  document: Document;
  /** The server URL the document's paths are relative to (its prefix included). */
  base: () => string;
  context: () => FuzzContext;
  /** Whether an error body has the surface's documented shape. */
  errorShape: (body: unknown) => boolean;
  /**
   * A 5xx the surface may answer for a real failure of this configuration (billing not set up,
   * say), never for bad input: `code` is the error's stable code.
   */
  allowedServerError?: (operation: Operation, status: number, body: unknown) => boolean;
  /** A health check and a real authorized request; throws when the server no longer answers. */
  alive: () => Promise<void>;
  /** Lines the server logged as failures since the last call (uncaught errors, 500s). */
  failures?: () => string[];
}

export const fuzzRuns = Number(process.env.PADDOCK_FUZZ_RUNS ?? 30);

/** A fixed seed per operation, so a failure replays; fast-check prints it with the counterexample. */
export function seedOf(operation: Operation): number {
  let hash = 0;
  for (const char of operation.id) hash = (hash * 31 + (char.codePointAt(0) as number)) | 0;
  return hash;
}

/** Fuzzes one operation: no 5xx, no hang, the documented error shape; then the server still lives. */
export async function fuzzOperation(
  surface: Surface,
  operation: Operation,
  numRuns = fuzzRuns,
): Promise<number> {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(requestsFor(surface.document, operation, surface.context()), async (request) => {
      runs++;
      const answer = await send(surface.base(), request);
      if (process.env.PADDOCK_FUZZ_TRACE)
        console.log(
          `TRACE ${answer.status} ${request.method} ${request.target.slice(0, 80)} ${request.note} ${answer.text.slice(0, 100)}`,
        );
      const what = `${request.method} ${request.target} (${request.note}) → ${answer.status} ${answer.text.slice(0, 300)}`;
      let body: unknown;
      try {
        body = answer.text ? JSON.parse(answer.text) : undefined;
      } catch {
        body = undefined;
      }
      if (answer.status >= 500 && !surface.allowedServerError?.(operation, answer.status, body))
        throw new Error(`server error: ${what}`);
      if (answer.status >= 400 && !surface.errorShape(body))
        throw new Error(`error not in the surface's shape: ${what}`);
      const logged = surface.failures?.() ?? [];
      if (logged.length > 0) throw new Error(`the server logged a failure for ${what}: ${logged.join("\n")}`);
    }),
    { numRuns, seed: seedOf(operation), endOnFailure: true },
  );
  await surface.alive();
  return runs;
}

/** Operations of the document that the test did not fuzz: a new route in the document fails the suite. */
export function unexercised(operations: Operation[], exercised: Set<string>): string[] {
  return operations.map((operation) => operation.id).filter((id) => !exercised.has(id));
}

/**
 * A logger for a test server that keeps what it logs at error level and above, so a fuzz run
 * can tell the server logged a failure (an uncaught error, a 500) for one of its requests.
 */
export function failureLog(): { destination: Writable; take: () => string[] } {
  let lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(
        ...String(chunk)
          .split("\n")
          .filter((line) => line.trim() !== ""),
      );
      done();
    },
  });
  return {
    destination,
    take() {
      const taken = lines;
      lines = [];
      return taken;
    },
  };
}
