import type { RequestOptions, Transport } from "./transport.js";
import type { SandboxUsageList, UsageSummary } from "./types.js";
import { queryOf } from "./url.js";

/**
 * `client.usage`: sandbox minutes of the current calendar month (UTC). Needs a session or an
 * unscoped key; a scoped key is refused (`scope_forbidden`).
 */
export class Usage {
  constructor(private readonly transport: Transport) {}

  /** Minutes used, the plan, its included minutes and what is left. */
  get(options: RequestOptions = {}): Promise<UsageSummary> {
    return this.transport.json("GET", "/usage", undefined, options);
  }

  /** One page of minutes per sandbox, newest first; deleted sandboxes stay listed. */
  sandboxes(options: RequestOptions & { page?: number; pageSize?: number } = {}): Promise<SandboxUsageList> {
    const { page, pageSize, ...request } = options;
    const path = `/usage/sandboxes${queryOf({ page, pageSize })}`;
    return this.transport.json("GET", path, undefined, request);
  }
}
