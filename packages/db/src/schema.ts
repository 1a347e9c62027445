import type { Generated } from "kysely";

/**
 * Tables as Kysely sees them. Times are RFC 3339 UTC strings (they sort as text on both
 * engines); JSON columns hold serialized JSON text; booleans are 0/1 integers.
 */
export interface SandboxesTable {
  id: string;
  /** Account that owns the sandbox (control plane); null for runtime-API sandboxes. */
  owner: string | null;
  state: string;
  reason: string | null;
  message: string | null;
  last_transition_at: string;
  image_uri: string | null;
  snapshot_id: string | null;
  template: string | null;
  entrypoint: string;
  metadata: string;
  extensions: string;
  resource_limits: string;
  platform: string | null;
  network_policy: string | null;
  secure_access: number;
  container_id: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  /** Template whose warm pool holds this sandbox; null once claimed (or never pooled). */
  pooled_for?: string | null;
  /** The server replica that last moved this sandbox; an unfinished move is its work while it lives. */
  replica?: string | null;
  /** Its disk quota in bytes (counted against its owner's plan); null when it has none. */
  disk_bytes?: number | string | null;
  /** Its lifecycle policy as JSON (`SandboxLifecycle`); null: the defaults. */
  lifecycle?: string | null;
  /** When it counts as idle unless used before; null: it never idles out. */
  idle_at?: string | null;
  last_activity_at?: string | null;
  /** While Paused or moving to disk: "memory" or "disk". */
  paused_to?: string | null;
  /** While paused to disk: 1 when its processes and memory come back on resume. */
  memory_preserved?: number | null;
  /** When it is deleted if still Paused; null: never. */
  paused_until?: string | null;
}

export interface SnapshotsTable {
  id: string;
  owner: string | null;
  sandbox_id: string;
  name: string | null;
  state: string;
  reason: string | null;
  message: string | null;
  last_transition_at: string;
  image_ref: string | null;
  entrypoint: string;
  created_at: string;
  replica?: string | null;
}

export interface SandboxEventsTable {
  id: Generated<number>;
  sandbox_id: string;
  at: string;
  kind: string;
  message: string;
}

export interface AccountsTable {
  id: string;
  email: string;
  /** scrypt$N$r$p$salt$hash */
  password_hash: string;
  plan: string;
  created_at: string;
}

export interface SessionsTable {
  /** SHA-256 of the session token; the token itself is never stored. */
  token_hash: string;
  account_id: string;
  created_at: string;
  expires_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  /** The first characters of the secret, shown in listings to tell keys apart. */
  prefix: string;
  /** SHA-256 of the secret. */
  secret_hash: string;
  /** null = every surface; else one of sandboxes, memory, secrets. */
  scope: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface SecretsTable {
  account_id: string;
  /** Environment-variable-like name, unique per account. */
  name: string;
  /** The value sealed by the control plane's SealedBox; never plaintext. */
  sealed_value: string;
  created_at: string;
  updated_at: string;
}

export interface MemoriesTable {
  /** Integer key the full-text index refers to; `id` is what clients see. */
  seq: Generated<number>;
  id: string;
  account_id: string;
  content: string;
  /** JSON object. */
  metadata: string;
  /** JSON array of strings (also one row each in memory_tags, for filtering). */
  tags: string;
  created_at: string;
}

export interface MemoryTagsTable {
  memory_id: string;
  account_id: string;
  tag: string;
}

export interface SandboxUsageTable {
  sandbox_id: string;
  /** Calendar month (UTC) as `YYYY-MM`. */
  period: string;
  account_id: string;
  template: string | null;
  /** Running time counted in this period; PostgreSQL's bigint arrives as a string. */
  running_ms: number | string;
  /** When the sandbox was first counted in this period. */
  started_at: string;
  updated_at: string;
}

/** Running time of an account's sandboxes on one UTC day, for the per-day usage chart. */
export interface AccountUsageDaysTable {
  account_id: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** PostgreSQL's bigint arrives as a string. */
  running_ms: number | string;
}

/** Resumes of an account's sandboxes in a period, asked or on use (decision 0193). */
export interface AccountResumesTable {
  account_id: string;
  /** `YYYY-MM` (UTC). */
  period: string;
  resumes: number | string;
}

export interface UsageMetersTable {
  /** A sandbox that is Running and owned by an account: its time since `since` is not yet counted. */
  sandbox_id: string;
  account_id: string;
  template: string | null;
  since: string;
}

export interface AccountBillingTable {
  account_id: string;
  /** The platform's Stripe customer for this account, once a checkout created one. */
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  /** Stripe's subscription status as last reported (active, past_due, canceled…). */
  subscription_status: string | null;
  updated_at: string;
}

export interface BillingEventsTable {
  /** Stripe's event id (`evt_…`): handled once. */
  event_id: string;
  type: string;
  account_id: string | null;
  received_at: string;
}

export interface PaymentCredentialsTable {
  account_id: string;
  provider: string;
  /** The provider secret key sealed by the control plane's SealedBox; never plaintext. */
  sealed_key: string;
  /** e.g. `sk_test_…1234`: all that is ever shown. */
  masked_key: string;
  livemode: number;
  created_at: string;
  updated_at: string;
}

export interface PaymentAgentKeysTable {
  account_id: string;
  /** SHA-256 of the agent key. */
  key_hash: string;
  prefix: string;
  /** JSON array of operation names. */
  allowed_operations: string;
  currency: string;
  /** Amounts in the currency's smallest unit; PostgreSQL's bigint arrives as a string. */
  max_amount: number | string;
  total_limit: number | string | null;
  amount_used: number | string;
  created_at: string;
  last_used_at: string | null;
}

/** A named lease on work that must run in one replica at a time; see leases.ts. */
export interface LeasesTable {
  name: string;
  holder: string;
  /** Milliseconds since the epoch, by the database's clock. */
  expires_at: number | string;
}

/** Hits of one rate-limited key in its current fixed window, which ends at `window_end` (epoch ms). */
export interface RateWindowsTable {
  key: string;
  window_end: number | string;
  hits: number;
}

/** An address an account logged in from, as a keyed hash (never the address itself). */
export interface LoginAddressesTable {
  account_id: string;
  address_hash: string;
  last_seen_at: string;
}

/** A named volume: an ext4 image of `size_bytes` on the host, mounted into sandboxes. */
export interface VolumesTable {
  id: string;
  /** Account that owns it; null for the runtime API's operator. */
  owner: string | null;
  /** `owner`, or "" for the operator: names are unique per key (a unique index cannot see nulls as equal). */
  owner_key: string;
  name: string;
  size_bytes: number | string;
  created_at: string;
}

/** A sandbox mounting a volume; rows go with the sandbox's row. */
export interface SandboxVolumesTable {
  sandbox_id: string;
  volume_id: string;
  /** Where the sandbox sees it. */
  mount_path: string;
  read_only: number;
  /** 1: the volume goes when the sandbox does (the runtime API's deleteOnSandboxTermination). */
  delete_with_sandbox: number;
}

/** A template an account built (decision 0198). */
export interface AccountTemplatesTable {
  id: string;
  owner: string;
  name: string;
  description: string;
  /** 1: every account sees it (the operator published it). */
  published: number;
  current_build_id: string | null;
  image: string | null;
  /** What sandboxes started from it get, as JSON (`TemplateSettings`), from its current build. */
  settings: string;
  created_at: string;
  updated_at: string;
}

export interface TemplateBuildsTable {
  id: string;
  template_id: string;
  owner: string;
  /** waiting | building | ready | error | cancelled */
  status: string;
  reason: string | null;
  failed_step: number | null;
  /** The build's steps as JSON (`BuildSpec`). */
  spec: string;
  /** What the template gets when this build succeeds, as JSON. */
  settings: string;
  image: string | null;
  image_bytes: number | string | null;
  /** The replica running it; with `heartbeat_at`, how a build whose server died is found. */
  replica: string | null;
  cancel_requested: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  heartbeat_at: string | null;
}

export interface TemplateBuildLogsTable {
  build_id: string;
  seq: number;
  at: string;
  level: string;
  message: string;
}

/** One security-relevant event of an account (decision 0204); never updated or deleted. */
export interface AuditEventsTable {
  seq: Generated<number>;
  id: string;
  account_id: string;
  at: string;
  /** Dotted, stable: `key.created`, `limit.hit`, … */
  type: string;
  /** session | key | password | anonymous | system | billing */
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  actor_address: string | null;
  target_type: string | null;
  target_id: string | null;
  target_name: string | null;
  /** Small JSON object; never a secret's value, a key, a password or a token. */
  details: string;
}

export interface Database {
  audit_events: AuditEventsTable;
  account_templates: AccountTemplatesTable;
  template_builds: TemplateBuildsTable;
  template_build_logs: TemplateBuildLogsTable;
  sandboxes: SandboxesTable;
  snapshots: SnapshotsTable;
  sandbox_events: SandboxEventsTable;
  accounts: AccountsTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  secrets: SecretsTable;
  memories: MemoriesTable;
  memory_tags: MemoryTagsTable;
  sandbox_usage: SandboxUsageTable;
  usage_meters: UsageMetersTable;
  account_usage_days: AccountUsageDaysTable;
  account_resumes: AccountResumesTable;
  account_billing: AccountBillingTable;
  billing_events: BillingEventsTable;
  payment_credentials: PaymentCredentialsTable;
  payment_agent_keys: PaymentAgentKeysTable;
  leases: LeasesTable;
  rate_windows: RateWindowsTable;
  login_addresses: LoginAddressesTable;
  volumes: VolumesTable;
  sandbox_volumes: SandboxVolumesTable;
}
