import type { RequestOptions, Transport } from "./transport.js";
import type { AuditPage, AuditQuery } from "./types.js";
import { queryOf } from "./url.js";

/**
 * `client.audit`: the account's audit log, newest first (sign-ups, logins, keys, secrets,
 * sandboxes, templates, limits hit, payments, plan). A session or an unscoped key only.
 */
export class Audit {
  constructor(private readonly transport: Transport) {}

  /** One page of events; pass its `nextCursor` as `cursor` for the next (older) page. */
  list(options: RequestOptions & AuditQuery = {}): Promise<AuditPage> {
    const { type, since, until, target, limit, cursor, ...request } = options;
    const path = `/audit${queryOf({ type, since, until, target, limit, cursor })}`;
    return this.transport.json("GET", path, undefined, request);
  }
}
