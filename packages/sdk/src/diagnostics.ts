import type { RequestOptions, Transport } from "./transport.js";
import type { DiagnosticText } from "./types.js";
import { queryOf } from "./url.js";

export interface DiagnosticsOptions extends RequestOptions {
  /**
   * logs: `"container"` (the sandbox's output), `"lifecycle"` or `"all"`; events: `"lifecycle"`,
   * `"runtime"` or `"all"`. Defaults to `"all"`.
   */
  scope?: string;
}

/** `sandbox.diagnostics`: what the server knows of the sandbox, as text. */
export class Diagnostics {
  constructor(
    private readonly transport: Transport,
    private readonly sandboxId: string,
  ) {}

  /** The sandbox's output and lifecycle record; `truncated` when only the newest 8 MiB came. */
  logs(options: DiagnosticsOptions = {}): Promise<DiagnosticText> {
    return this.read("logs", options);
  }

  /** The sandbox's lifecycle events and its container's state in the engine. */
  events(options: DiagnosticsOptions = {}): Promise<DiagnosticText> {
    return this.read("events", options);
  }

  private read(kind: "logs" | "events", { scope, ...request }: DiagnosticsOptions): Promise<DiagnosticText> {
    const query = queryOf({ scope: scope || undefined });
    return this.transport.json(
      "GET",
      `/sandboxes/${this.sandboxId}/diagnostics/${kind}${query}`,
      undefined,
      request,
    );
  }
}
