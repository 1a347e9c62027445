/** The schema key by which a route says its body may be left out. */
export const optionalBody = "x-optional-body";

/**
 * Fastify's generator marks every route's body required; a route that also takes none (an empty
 * POST) carries `optionalBody` in its schema, and its document says the body is optional.
 */
export function optionalBodies<T extends { paths?: object }>(document: T): T {
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item as Record<string, Record<string, unknown>>)) {
      if (!operation || typeof operation !== "object" || !(optionalBody in operation)) continue;
      delete operation[optionalBody];
      const body = operation.requestBody as { required?: boolean } | undefined;
      if (body) body.required = false;
    }
  return document;
}
