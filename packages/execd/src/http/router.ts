import type { IncomingMessage, ServerResponse } from "node:http";
import { Errors, PaddockError } from "@paddock/common/errors";
import { decodePathSegment } from "./request.js";

/** What answers a route: the request, its response, its URL and the path's `:params` in order. */
export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  params: string[],
) => Promise<void> | void;

export interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

/** A route on `path`, whose `:name` segments are handed to the handler decoded. */
export function route(method: string, path: string, handler: Handler): Route {
  const pattern = new RegExp(`^${path.replace(/:[a-z]+/g, "([^/]+)")}$`);
  return { method, pattern, handler };
}

/** The route for a request, or undefined (404); a path served under other methods is 405. */
export function match(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: string[] } | undefined {
  let pathMatched = false;
  for (const candidate of routes) {
    const found = candidate.pattern.exec(path);
    if (!found) continue;
    pathMatched = true;
    if (candidate.method === method)
      return { route: candidate, params: found.slice(1).map(decodePathSegment) };
  }
  if (pathMatched) throw new PaddockError(Errors.methodNotAllowed, `${method} is not allowed on ${path}`);
  return undefined;
}
