import { Audit } from "./audit.js";
import { Billing } from "./billing.js";
import { Memory } from "./memory.js";
import { Payments } from "./payments.js";
import { Secrets } from "./secrets.js";
import { Templates } from "./templates.js";
import { type ConnectionOptions, Transport } from "./transport.js";
import type { Account, ApiKey, ApiKeyWithSecret, Session } from "./types.js";
import { encodePart } from "./url.js";
import { Usage } from "./usage.js";
import { Volumes } from "./volumes.js";

/** Sign-up, log-in, API keys, secrets, memory, volumes, templates, usage and the audit log. */
export class Paddock {
  private readonly transport: Transport;
  /** Works with a session, an unscoped key or a key scoped to `secrets`. */
  readonly secrets: Secrets;
  /** Works with a session, an unscoped key or a key scoped to `memory`. */
  readonly memory: Memory;
  /** Works with a session or an unscoped key only. */
  readonly usage: Usage;
  /** Plans and checkout; a session or an unscoped key only. */
  readonly billing: Billing;
  /** Bring-your-own-key payments; a session or an unscoped key (agents use `PaymentOperations.forAgent`). */
  readonly payments: Payments;
  /** The account's volumes; works with a session, an unscoped key or a key scoped to `sandboxes`. */
  readonly volumes: Volumes;
  /** The account's own templates; works with a session, an unscoped key or a key scoped to `sandboxes`. */
  readonly templates: Templates;
  /** The account's audit log; a session or an unscoped key only. */
  readonly audit: Audit;

  constructor(options: ConnectionOptions = {}) {
    this.transport = new Transport(options);
    this.secrets = new Secrets(this.transport);
    this.memory = new Memory(this.transport);
    this.usage = new Usage(this.transport);
    this.billing = new Billing(this.transport);
    this.payments = new Payments(this.transport);
    this.volumes = new Volumes(this.transport);
    this.templates = new Templates(this.transport);
    this.audit = new Audit(this.transport);
  }

  static async signup(email: string, password: string, options: ConnectionOptions = {}): Promise<Account> {
    return new Transport(options).json<Account>("POST", "/auth/signup", { email, password });
  }

  /** Logs in; the returned client authenticates with the session token. */
  static async login(
    email: string,
    password: string,
    options: ConnectionOptions = {},
  ): Promise<{ client: Paddock; session: Session }> {
    const session = await new Transport(options).json<Session>("POST", "/auth/login", { email, password });
    return { client: new Paddock({ ...options, apiKey: session.token }), session };
  }

  async me(): Promise<Account> {
    return this.transport.json<Account>("GET", "/auth/me");
  }

  async logout(): Promise<void> {
    await this.transport.fetch("POST", "/auth/logout");
  }

  readonly keys = {
    create: (
      options: {
        name?: string;
        scope?: "sandboxes" | "memory" | "secrets";
        expiresAt?: string;
        /** `e2b`: a secret shaped `e2b_…` for E2B's SDKs; the same kind of key on every surface. */
        format?: "paddock" | "e2b";
      } = {},
    ) => this.transport.json<ApiKeyWithSecret>("POST", "/keys", options),
    list: async () => (await this.transport.json<{ items: ApiKey[] }>("GET", "/keys")).items,
    delete: async (id: string) => {
      await this.transport.fetch("DELETE", `/keys/${encodePart(id)}`);
    },
    rotate: (id: string) => this.transport.json<ApiKeyWithSecret>("POST", `/keys/${encodePart(id)}/rotate`),
  };
}
