import {
  decodeUtf8,
  describeSchemaErrors,
  type ErrorShape,
  Errors,
  errorBody,
  illFormedString,
  isPaddockError,
  isUtf8Query,
  type Logger,
  PaddockError,
  type SchemaError,
  serverStateError,
} from "@paddock/common";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { echoRequestId } from "./request-id.js";

// ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type { ErrorShape };

/**
 * One error path for a Fastify scope: registry errors keep their code and status; framework
 * errors (validation, JSON, content type, size) become 4xx registry codes, never 422; anything
 * else is a 500 whose internals stay in the log.
 */
export function installErrorHandling(
  app: FastifyInstance,
  shape: ErrorShape,
  options: { logger?: Logger; notFound?: boolean } = {},
): void {
  const logger = options.logger;
  const send = (reply: FastifyReply, status: number, code: string, text: string) =>
    reply.status(status).send(errorBody(shape, code, text, status));

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isPaddockError(error)) {
      if (error.retryAfterSeconds !== undefined) reply.header("retry-after", String(error.retryAfterSeconds));
      return send(reply, error.status, error.code, error.message);
    }
    if (error.validation) return send(reply, 400, Errors.invalidRequest.code, validationMessage(error));
    switch (error.code) {
      case "FST_ERR_CTP_INVALID_JSON_BODY":
      case "FST_ERR_CTP_EMPTY_JSON_BODY":
        return send(reply, 400, Errors.invalidJson.code, "the request body is not valid JSON");
      case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
        return send(reply, 415, Errors.unsupportedMediaType.code, "send the body as application/json");
      case "FST_ERR_CTP_BODY_TOO_LARGE":
        return send(reply, 413, Errors.payloadTooLarge.code, "the request body is too large");
      case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
        return send(reply, 400, Errors.invalidRequest.code, "the Content-Length does not match the body");
    }
    if (typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500) {
      return send(reply, error.statusCode, Errors.invalidRequest.code, error.message);
    }
    const stateError = serverStateError(error);
    if (stateError) {
      // The database away is expected to pass; a full disk needs its operator.
      const level = stateError.status === 503 ? "warn" : "error";
      (logger ?? request.log)[level]({ err: error, url: request.url }, stateError.message);
      return send(reply, stateError.status, stateError.code, stateError.message);
    }
    (logger ?? request.log).error({ err: error, url: request.url }, "request failed");
    return send(reply, 500, Errors.internal.code, "an unexpected error occurred; see the server log");
  });

  // A scope without its own path prefix shares the root's not-found handler.
  if (options.notFound === false) return;
  app.setNotFoundHandler((request, reply) =>
    send(reply, 404, Errors.notFound.code, `no route ${request.method} ${request.url.split("?")[0]}`),
  );
}

/** What a schema refusal says: the part, the JSON path and the property (`validation-messages.ts`). */
export function validationMessage(error: FastifyError): string {
  return describeSchemaErrors(
    (error.validation ?? []) as unknown as SchemaError[],
    error.validationContext ?? "request",
  );
}

/**
 * Fastify's `frameworkErrors` option: a URL the router cannot take (a bad percent escape, a path
 * segment past `maxParamLength`) answered in the shape of the surface the path belongs to.
 */
export function frameworkErrorHandler(shapeFor: (path: string) => ErrorShape) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const tooLong = error.code === "FST_ERR_MAX_PARAM_LENGTH";
    const definition = tooLong ? Errors.uriTooLong : Errors.invalidRequest;
    const text = tooLong
      ? "a path segment is longer than the server accepts (100 characters)"
      : "the URL is not valid (check its percent escapes)";
    const path = request.raw.url?.split("?")[0] ?? "";
    // No hook runs for these, so the X-Request-ID every /v1 answer carries is set here; the router
    // refused before any surface was chosen, so control-plane paths get it too, harmlessly.
    echoRequestId(request, reply);
    return reply
      .status(definition.status)
      .send(errorBody(shapeFor(path), definition.code, text, definition.status));
  };
}

/**
 * JSON bodies for a Fastify scope: an empty body sent as `application/json` (as many clients
 * send on bodyless POSTs and DELETEs) is no body; anything else must parse. Fastify's own parser
 * does the parsing, with its guards against prototype poisoning. A body must be Unicode text
 * (`jsonText`), which Fastify's reading of it as a string would hide.
 */
export function installJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const text = jsonText(body as Buffer);
    if (typeof text !== "string") return done(text, undefined);
    if (text.trim() === "") return done(null, undefined);
    parse(request, text, (error, value) => {
      const illFormed = error ? undefined : illFormedString(value);
      done(illFormed === undefined ? error : notUnicode(illFormed), value);
    });
  });
}

/** A body's text, or the error when its bytes are not UTF-8. */
export function jsonText(bytes: Buffer): string | PaddockError {
  return (
    decodeUtf8(bytes) ??
    new PaddockError(Errors.invalidUnicode, "the request body is not UTF-8 (JSON is sent as UTF-8)")
  );
}

/** The refusal of a JSON string that is not Unicode (a lone surrogate escape). */
export function notUnicode(text: string): PaddockError {
  return new PaddockError(
    Errors.invalidUnicode,
    `the body holds a string that is not Unicode (a lone UTF-16 surrogate, as in ${JSON.stringify(text.slice(0, 40))}); send text, or binary content as base64`,
  );
}

/**
 * Refuses, before any handler, a query whose percent escapes are not UTF-8 (`?path=%FF`): Fastify
 * would hand the route the escape itself as text. Only routes that read their query (they declare
 * a `querystring` schema) are checked: a proxy passes a sandbox's queries on as they came.
 */
export function installQueryChecks(app: FastifyInstance): void {
  app.addHook("onRequest", async (request) => {
    if (request.routeOptions.schema?.querystring && !isUtf8Query(request.raw.url ?? ""))
      throw new PaddockError(
        Errors.invalidUnicode,
        "the query string is not UTF-8: a percent escape stands for bytes that are not UTF-8 (such as %FF)",
      );
  });
}

/**
 * Strict validation for a Fastify instance: bodies are checked as sent (a number is not a
 * string), query strings and path parameters are coerced from text (and repeated query keys
 * into arrays); extra properties are rejected rather than stripped.
 */
export function installValidation(app: FastifyInstance): void {
  const make = (coerceTypes: false | "array") => {
    const ajv = new Ajv({
      coerceTypes,
      removeAdditional: false,
      useDefaults: true,
      // The first error only: see decision 0125 (a refusal's cost stays that of one check).
      allErrors: false,
      // Errors carry their schema and value, so a message can name the known properties.
      verbose: true,
      strict: false,
    });
    addFormats(ajv);
    return ajv;
  };
  const forBodies = make(false);
  const forText = make("array");
  app.setValidatorCompiler(
    ({ schema, httpPart }) =>
      (httpPart === "body" ? forBodies : forText).compile(schema as object) as (data: unknown) => boolean,
  );
}
