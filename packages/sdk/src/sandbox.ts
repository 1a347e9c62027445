import { Commands } from "./commands.js";
import { Diagnostics } from "./diagnostics.js";
import { errorFor, PaddockError } from "./errors.js";
import { Files } from "./files.js";
import { NetworkPolicy } from "./network-policy.js";
import { type ConnectionOptions, type RequestOptions, Transport } from "./transport.js";
import type {
  CodeResult,
  CreateSandboxOptions,
  LifecycleOptions,
  NetworkPolicyOptions,
  PauseOptions,
  SandboxInfo,
  SandboxLifecycle,
  SandboxList,
  SandboxMetrics,
  Template,
  VolumeMountOptions,
} from "./types.js";
import { encodePart, queryOf } from "./url.js";

export interface CreateOptions extends ConnectionOptions {
  template?: string;
  env?: Record<string, string>;
  metadata?: Record<string, string>;
  /**
   * Lifetime in seconds, after which `lifecycle.onTimeout` applies (default: deleted); omit for
   * a sandbox that does not expire (it still pauses when idle).
   */
  timeoutSeconds?: number;
  /**
   * What happens at the timeout (`onTimeout: "kill" | "pause"`), after how many idle seconds it
   * pauses (`idleTimeout`, null: never), whether a running process counts as use
   * (`processesKeepAwake`), whether a call on it while paused resumes it (`autoResume`), and how
   * long it may stay paused before it is deleted (`maxPaused`). `idleTimeout` and `maxPaused` left
   * out are the plan's (`client.usage.get()` → `plan.lifecycle`).
   */
  lifecycle?: LifecycleOptions;
  /**
   * Outbound policy enforced by an egress sidecar (servers whose secure runtime has a NAT
   * table: runc or Kata, not gVisor).
   */
  networkPolicy?: NetworkPolicyOptions;
  /**
   * Stored secrets as environment variables, by name: `["OPENAI_API_KEY"]` uses each secret's
   * own name, `{ API_KEY: "OPENAI_API_KEY" }` picks the variable name. The values never pass
   * through this client.
   */
  secrets?: string[] | Record<string, string>;
  /** The account's volumes to mount: `[{ volume: "data", mountPath: "/data", readOnly?, subPath? }]`. */
  volumes?: VolumeMountOptions[];
}

/** A sandbox of the account the API key belongs to. */
export class Sandbox {
  readonly commands: Commands;
  readonly files: Files;
  readonly networkPolicy: NetworkPolicy;
  readonly diagnostics: Diagnostics;

  private constructor(
    private readonly transport: Transport,
    private info: SandboxInfo,
  ) {
    this.commands = new Commands(transport, info.id);
    this.files = new Files(transport, info.id);
    this.networkPolicy = new NetworkPolicy(transport, info.id);
    this.diagnostics = new Diagnostics(transport, info.id);
  }

  get id(): string {
    return this.info.id;
  }

  get state(): string {
    return this.info.state;
  }

  /** The template it was created from; null for a sandbox created from an image or a snapshot. */
  get template(): string | null {
    return this.info.template;
  }

  get metadata(): Record<string, string> {
    return this.info.metadata;
  }

  get expiresAt(): string | null {
    return this.info.expiresAt;
  }

  /** Its lifecycle as it applies: the create's choices, the plan's defaults for the rest. */
  get lifecycle(): SandboxLifecycle {
    return this.info.lifecycle;
  }

  /** Where it sleeps while paused: `memory`, `disk`, or null when it is not paused. */
  get pausedTo(): "memory" | "disk" | null {
    return this.info.pausedTo;
  }

  /**
   * Paused to disk: true when a resume brings back its processes and memory, false when only its
   * filesystem (processes start again). Null unless paused to disk.
   */
  get memoryPreserved(): boolean | null {
    return this.info.memoryPreserved;
  }

  /** When it pauses for want of use unless used before; null: never (or not running). */
  get idleAt(): string | null {
    return this.info.idleAt;
  }

  get lastActivityAt(): string | null {
    return this.info.lastActivityAt;
  }

  /** The sandbox as the API last returned it (`JSON.stringify(sandbox)` prints this). */
  toJSON(): SandboxInfo {
    return this.info;
  }

  static async create(options: CreateOptions = {}): Promise<Sandbox> {
    const transport = new Transport(options);
    const body: CreateSandboxOptions = {
      template: options.template ?? "python",
      ...(options.timeoutSeconds !== undefined ? { timeout: options.timeoutSeconds } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.metadata ? { metadata: options.metadata } : {}),
      ...(options.networkPolicy ? { networkPolicy: options.networkPolicy } : {}),
      ...(options.secrets ? { secrets: secretInjection(options.secrets) } : {}),
      ...(options.volumes ? { volumes: options.volumes } : {}),
      ...(options.lifecycle ? { lifecycle: options.lifecycle } : {}),
    };
    return new Sandbox(transport, await transport.json<SandboxInfo>("POST", "/sandboxes", body));
  }

  static async connect(id: string, options: ConnectionOptions = {}): Promise<Sandbox> {
    const transport = new Transport(options);
    return new Sandbox(transport, await transport.json<SandboxInfo>("GET", `/sandboxes/${encodePart(id)}`));
  }

  /** One page of the account's sandboxes, filtered by state(s) and the template they came from. */
  static async list(
    options: ConnectionOptions & {
      state?: string[];
      template?: string;
      page?: number;
      pageSize?: number;
    } = {},
  ): Promise<SandboxList> {
    const query = queryOf({
      state: options.state,
      template: options.template || undefined,
      page: options.page || undefined,
      pageSize: options.pageSize || undefined,
    });
    return new Transport(options).json<SandboxList>("GET", `/sandboxes${query}`);
  }

  static async templates(options: ConnectionOptions = {}): Promise<Template[]> {
    return (await new Transport(options).json<{ items: Template[] }>("GET", "/sandboxes/templates")).items;
  }

  /** Deletes a sandbox by id; the instance method `kill()` is this same call. */
  static async kill(id: string, options: ConnectionOptions = {}): Promise<void> {
    await new Transport(options).fetch("DELETE", `/sandboxes/${encodePart(id)}`);
  }

  async kill(): Promise<void> {
    await this.transport.fetch("DELETE", `/sandboxes/${this.id}`);
  }

  async refresh(options: RequestOptions = {}): Promise<this> {
    this.info = await this.transport.json<SandboxInfo>("GET", `/sandboxes/${this.id}`, undefined, options);
    return this;
  }

  /**
   * Pauses it in the background (`state` Pausing, then Paused): in memory by default, or
   * `{ to: "disk" }` off the host's memory (also for one already paused in memory).
   */
  async pause(options: PauseOptions = {}): Promise<void> {
    const body = options.to ? { to: options.to } : undefined;
    this.info = await this.transport.json<SandboxInfo>("POST", `/sandboxes/${this.id}/pause`, body);
  }

  /** Resumes it in the background; a call that needs it (a command, a file) also resumes it unless `autoResume` is off. */
  async resume(): Promise<void> {
    this.info = await this.transport.json<SandboxInfo>("POST", `/sandboxes/${this.id}/resume`);
  }

  /** A new lifetime of `timeoutSeconds`, counted from now. */
  async renew(timeoutSeconds: number): Promise<void> {
    this.info = await this.transport.json<SandboxInfo>("POST", `/sandboxes/${this.id}/renew`, {
      timeout: timeoutSeconds,
    });
  }

  /** Merges into the metadata; a null value removes that key. */
  async setMetadata(patch: Record<string, string | null>): Promise<void> {
    this.info = await this.transport.json<SandboxInfo>("PATCH", `/sandboxes/${this.id}/metadata`, patch);
  }

  /**
   * A public URL reaching `port` inside the sandbox (HTTP and WebSocket). The URL itself is the
   * credential: share it only as far as the port should be reachable. It expires (default 1 h).
   */
  async getEndpoint(
    port: number,
    options: { expiresInSeconds?: number } = {},
  ): Promise<{ url: string; expiresAt: string }> {
    const query = options.expiresInSeconds ? `?expiresInSeconds=${options.expiresInSeconds}` : "";
    return this.transport.json("GET", `/sandboxes/${this.id}/endpoints/${port}${query}`);
  }

  /** The sandbox's CPU and memory now (execd's field names: `cpu_used_pct`, `mem_used_mib`, …). */
  async metrics(options: RequestOptions = {}): Promise<SandboxMetrics> {
    return this.transport.json("GET", `/sandboxes/${this.id}/metrics`, undefined, options);
  }

  /**
   * A sample a second until the loop is left. When the sandbox stops running (deleted, paused,
   * killed) the iteration ends with the server's PaddockError (`sandbox_not_found`, `invalid_state`, …).
   */
  async *watchMetrics(options: RequestOptions = {}): AsyncGenerator<SandboxMetrics> {
    for await (const event of this.transport.events(
      `/sandboxes/${this.id}/metrics/watch`,
      undefined,
      options,
    )) {
      if (event.type === "error")
        throw errorFor(Number(event.status ?? 502), String(event.code), String(event.detail));
      if (event.type === "metrics") {
        const { type: _, ...sample } = event;
        yield sample as SandboxMetrics;
      }
    }
    throw new PaddockError("the metrics stream ended before the sandbox did", "connection_failed", 0, true);
  }

  /** Creates a code context (state persists between runs in it). */
  async createCodeContext(language = "python"): Promise<{ id: string; language: string }> {
    return this.transport.json("POST", `/sandboxes/${this.id}/code/contexts`, { language });
  }

  /** Runs code statefully; pass `context` (from createCodeContext) to keep state between calls. */
  async runCode(
    code: string,
    options: { language?: string; context?: string } & RequestOptions = {},
  ): Promise<CodeResult> {
    return this.transport.json<CodeResult>(
      "POST",
      `/sandboxes/${this.id}/code`,
      {
        code,
        ...(options.language ? { language: options.language } : {}),
        ...(options.context ? { contextId: options.context } : {}),
      },
      options,
    );
  }
}

/** `["NAME"]` is shorthand for `{ NAME: "NAME" }`. */
function secretInjection(secrets: string[] | Record<string, string>): Record<string, string> {
  return Array.isArray(secrets) ? Object.fromEntries(secrets.map((name) => [name, name])) : secrets;
}
