import { Paddock, PermissionError, Sandbox } from "paddock";
import type { PaddockConnection } from "./tool-results.js";

/** The parts of the API a key may be limited to (an API key's `scope`). */
export const surfaces = ["sandboxes", "memory", "secrets"] as const;
export type Surface = (typeof surfaces)[number];

/** The surfaces a key of this scope may call: all of them without a scope, else its one. */
export function surfacesOfScope(scope: Surface | null): ReadonlySet<Surface> {
  return new Set(scope ? [scope] : surfaces);
}

/** One cheap read per surface: refused with `scope_forbidden` when the key is limited to another. */
const probes: Record<Surface, (connection: PaddockConnection) => Promise<unknown>> = {
  sandboxes: (connection) => Sandbox.templates(connection),
  memory: (connection) => new Paddock(connection).memory.list({ pageSize: 1 }),
  secrets: (connection) => new Paddock(connection).secrets.list(),
};

/**
 * Which of `wanted` a credential may call, as the server answers for it: each is tried with one
 * read, so the server's own authorization decides. A bad key fails here (`AuthenticationError`).
 */
export async function probeSurfaces(
  connection: PaddockConnection,
  wanted: Iterable<Surface>,
): Promise<ReadonlySet<Surface>> {
  const allowed = new Set<Surface>();
  for (const surface of new Set(wanted)) {
    try {
      await probes[surface](connection);
      allowed.add(surface);
    } catch (error) {
      if (!(error instanceof PermissionError && error.code === "scope_forbidden")) throw error;
    }
  }
  return allowed;
}
