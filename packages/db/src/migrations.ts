import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";

/**
 * Migrations in code, written with Kysely's schema builder so the same steps run on SQLite
 * and PostgreSQL. Append new ones; never edit one that has shipped.
 */
type Engine = "sqlite" | "postgres";

const migrations = (engine: Engine): Record<string, Migration> => ({
  "0001_sandboxes_and_snapshots": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("sandboxes")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner", "text")
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("message", "text")
        .addColumn("last_transition_at", "text", (c) => c.notNull())
        .addColumn("image_uri", "text")
        .addColumn("snapshot_id", "text")
        .addColumn("template", "text")
        .addColumn("entrypoint", "text", (c) => c.notNull())
        .addColumn("metadata", "text", (c) => c.notNull())
        .addColumn("extensions", "text", (c) => c.notNull())
        .addColumn("resource_limits", "text", (c) => c.notNull())
        .addColumn("platform", "text")
        .addColumn("network_policy", "text")
        .addColumn("secure_access", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("container_id", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text")
        .execute();
      await db.schema.createIndex("sandboxes_state").on("sandboxes").column("state").execute();
      await db.schema.createIndex("sandboxes_expires_at").on("sandboxes").column("expires_at").execute();
      await db.schema.createIndex("sandboxes_owner").on("sandboxes").column("owner").execute();

      await db.schema
        .createTable("snapshots")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner", "text")
        .addColumn("sandbox_id", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("message", "text")
        .addColumn("last_transition_at", "text", (c) => c.notNull())
        .addColumn("image_ref", "text")
        .addColumn("entrypoint", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("snapshots_sandbox_id").on("snapshots").column("sandbox_id").execute();

      await db.schema
        .createTable("sandbox_events")
        .addColumn("id", "integer", (c) =>
          engine === "postgres"
            ? c.primaryKey().generatedByDefaultAsIdentity()
            : c.primaryKey().autoIncrement(),
        )
        .addColumn("sandbox_id", "text", (c) => c.notNull())
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("sandbox_events_sandbox_id")
        .on("sandbox_events")
        .column("sandbox_id")
        .execute();
    },
  },
  "0002_accounts_and_keys": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("accounts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("password_hash", "text", (c) => c.notNull())
        .addColumn("plan", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("sessions")
        .addColumn("token_hash", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("prefix", "text", (c) => c.notNull())
        .addColumn("secret_hash", "text", (c) => c.notNull().unique())
        .addColumn("scope", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text")
        .addColumn("last_used_at", "text")
        .execute();
      await db.schema.createIndex("api_keys_account_id").on("api_keys").column("account_id").execute();
    },
  },
  "0003_warm_pools": {
    async up(db: Kysely<unknown>) {
      // Set while a sandbox waits, pre-started, in a template's warm pool; cleared when claimed.
      await db.schema.alterTable("sandboxes").addColumn("pooled_for", "text").execute();
      await db.schema.createIndex("sandboxes_pooled_for").on("sandboxes").column("pooled_for").execute();
    },
  },
  "0004_secrets_and_memory": {
    async up(db: Kysely<unknown>) {
      // Secret values are sealed (AES-256-GCM) by the control plane before they reach this table.
      await db.schema
        .createTable("secrets")
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("sealed_value", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("secrets_pk", ["account_id", "name"])
        .execute();

      // `seq` is the integer key the full-text index points at (FTS5 needs an integer rowid).
      await db.schema
        .createTable("memories")
        .addColumn("seq", "integer", (c) =>
          engine === "postgres"
            ? c.primaryKey().generatedByDefaultAsIdentity()
            : c.primaryKey().autoIncrement(),
        )
        .addColumn("id", "text", (c) => c.notNull().unique())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("content", "text", (c) => c.notNull())
        .addColumn("metadata", "text", (c) => c.notNull())
        .addColumn("tags", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("memories_account_created")
        .on("memories")
        .columns(["account_id", "created_at"])
        .execute();
      await db.schema
        .createTable("memory_tags")
        .addColumn("memory_id", "text", (c) => c.notNull())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("tag", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("memory_tags_pk", ["memory_id", "tag"])
        .execute();
      await db.schema
        .createIndex("memory_tags_account_tag")
        .on("memory_tags")
        .columns(["account_id", "tag"])
        .execute();

      if (engine === "postgres") {
        await sql`alter table memories add column search tsvector
          generated always as (to_tsvector('english', content)) stored`.execute(db);
        await sql`create index memories_search on memories using gin (search)`.execute(db);
      } else {
        // An external-content FTS5 index over memories.content, kept in step by triggers.
        await sql`create virtual table memories_fts using fts5(
          content, content = 'memories', content_rowid = 'seq',
          tokenize = 'porter unicode61 remove_diacritics 2')`.execute(db);
        await sql`create trigger memories_fts_insert after insert on memories begin
          insert into memories_fts (rowid, content) values (new.seq, new.content);
        end`.execute(db);
        await sql`create trigger memories_fts_delete after delete on memories begin
          insert into memories_fts (memories_fts, rowid, content) values ('delete', old.seq, old.content);
        end`.execute(db);
      }
    },
  },
  "0005_usage": {
    async up(db: Kysely<unknown>) {
      // Running time per sandbox and calendar month (UTC), in milliseconds; kept after the
      // sandbox is gone so the month's usage stays whole.
      await db.schema
        .createTable("sandbox_usage")
        .addColumn("sandbox_id", "text", (c) => c.notNull())
        .addColumn("period", "text", (c) => c.notNull())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("template", "text")
        .addColumn("running_ms", "bigint", (c) => c.notNull())
        .addColumn("started_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("sandbox_usage_pk", ["sandbox_id", "period"])
        .execute();
      await db.schema
        .createIndex("sandbox_usage_account_period")
        .on("sandbox_usage")
        .columns(["account_id", "period", "started_at"])
        .execute();
      // One row per sandbox running right now: its time since `since` is not yet in sandbox_usage.
      await db.schema
        .createTable("usage_meters")
        .addColumn("sandbox_id", "text", (c) => c.primaryKey())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("template", "text")
        .addColumn("since", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("usage_meters_account_id")
        .on("usage_meters")
        .column("account_id")
        .execute();
    },
  },
  "0006_billing_and_payments": {
    async up(db: Kysely<unknown>) {
      // The platform's Stripe customer and subscription of an account (the plan itself stays on
      // accounts.plan, where usage enforcement reads it).
      await db.schema
        .createTable("account_billing")
        .addColumn("account_id", "text", (c) => c.primaryKey())
        .addColumn("stripe_customer_id", "text", (c) => c.unique())
        .addColumn("stripe_subscription_id", "text")
        .addColumn("subscription_status", "text")
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      // Every webhook event handled, by Stripe's event id: a replay finds its row and changes nothing.
      await db.schema
        .createTable("billing_events")
        .addColumn("event_id", "text", (c) => c.primaryKey())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("account_id", "text")
        .addColumn("received_at", "text", (c) => c.notNull())
        .execute();
      // A user's own provider key, sealed by the control plane; only the masked form is ever shown.
      await db.schema
        .createTable("payment_credentials")
        .addColumn("account_id", "text", (c) => c.primaryKey())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("sealed_key", "text", (c) => c.notNull())
        .addColumn("masked_key", "text", (c) => c.notNull())
        .addColumn("livemode", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      // One agent key per account (stored hashed) and the limits it acts within.
      await db.schema
        .createTable("payment_agent_keys")
        .addColumn("account_id", "text", (c) => c.primaryKey())
        .addColumn("key_hash", "text", (c) => c.notNull().unique())
        .addColumn("prefix", "text", (c) => c.notNull())
        .addColumn("allowed_operations", "text", (c) => c.notNull())
        .addColumn("currency", "text", (c) => c.notNull())
        .addColumn("max_amount", "bigint", (c) => c.notNull())
        .addColumn("total_limit", "bigint")
        .addColumn("amount_used", "bigint", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("last_used_at", "text")
        .execute();
    },
  },
  "0007_replicas": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("leases")
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("holder", "text", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();
      // The replica that last moved a sandbox or snapshot: its unfinished moves are its own while it lives.
      await db.schema.alterTable("sandboxes").addColumn("replica", "text").execute();
      await db.schema.alterTable("snapshots").addColumn("replica", "text").execute();
    },
  },
  "0008_usage_days": {
    async up(db: Kysely<unknown>) {
      // Running time per account and UTC day (`YYYY-MM-DD`), written with sandbox_usage.
      await db.schema
        .createTable("account_usage_days")
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("running_ms", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("account_usage_days_pk", ["account_id", "day"])
        .execute();
      // Time counted before days were kept goes on the day each sandbox was first counted in its
      // period: not the day it ran, but each period's days still add up to its total.
      await sql`insert into account_usage_days (account_id, day, running_ms)
        select account_id, substr(started_at, 1, 10), sum(running_ms)
        from sandbox_usage group by account_id, substr(started_at, 1, 10)`.execute(db);
    },
  },
  "0009_account_limits": {
    async up(db: Kysely<unknown>) {
      // Request counts per fixed window, shared by replicas: one row per counted key.
      await db.schema
        .createTable("rate_windows")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("window_end", "bigint", (c) => c.notNull())
        .addColumn("hits", "integer", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("rate_windows_window_end")
        .on("rate_windows")
        .column("window_end")
        .execute();
      // Keyed hashes of the client addresses each account has logged in from.
      await db.schema
        .createTable("login_addresses")
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("address_hash", "text", (c) => c.notNull())
        .addColumn("last_seen_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("login_addresses_pk", ["account_id", "address_hash"])
        .execute();
      // A sandbox's disk quota in bytes, for the account's total; null: none (quotas off).
      await db.schema.alterTable("sandboxes").addColumn("disk_bytes", "bigint").execute();
    },
  },
  "0010_sleep_and_wake": {
    async up(db: Kysely<unknown>) {
      // What happens at the timeout, when idle, and on use while paused (JSON); null: the defaults.
      await db.schema.alterTable("sandboxes").addColumn("lifecycle", "text").execute();
      // When the sandbox counts as idle if nothing uses it before (RFC 3339); null: never.
      await db.schema.alterTable("sandboxes").addColumn("idle_at", "text").execute();
      await db.schema.alterTable("sandboxes").addColumn("last_activity_at", "text").execute();
      // While Paused: "memory" (frozen in place) or "disk" (off the host's memory), and whether
      // its processes and memory come back on resume.
      await db.schema.alterTable("sandboxes").addColumn("paused_to", "text").execute();
      await db.schema.alterTable("sandboxes").addColumn("memory_preserved", "integer").execute();
      // When a sandbox paused this long is deleted (its plan's retention); null: kept.
      await db.schema.alterTable("sandboxes").addColumn("paused_until", "text").execute();
    },
  },
  "0011_volumes": {
    async up(db: Kysely<unknown>) {
      // Named volumes, each an ext4 image of `size_bytes` on the host; owner null: the runtime API's operator.
      await db.schema
        .createTable("volumes")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner", "text")
        // `owner`, or "" for the operator: one name per key (a unique index sees no two nulls as equal).
        .addColumn("owner_key", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("size_bytes", "bigint", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("volumes_owner_key_name")
        .on("volumes")
        .columns(["owner_key", "name"])
        .unique()
        .execute();
      // Which sandboxes mount which volumes: a volume with rows here is in use.
      await db.schema
        .createTable("sandbox_volumes")
        .addColumn("sandbox_id", "text", (c) => c.notNull())
        .addColumn("volume_id", "text", (c) => c.notNull())
        .addColumn("mount_path", "text", (c) => c.notNull())
        .addColumn("read_only", "integer", (c) => c.notNull().defaultTo(0))
        // The runtime API's pvc with deleteOnSandboxTermination, made by this sandbox's create.
        .addColumn("delete_with_sandbox", "integer", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("sandbox_volumes_pk", ["sandbox_id", "mount_path"])
        .execute();
      await db.schema
        .createIndex("sandbox_volumes_volume_id")
        .on("sandbox_volumes")
        .column("volume_id")
        .execute();
    },
  },
  "0012_resume_counts": {
    async up(db: Kysely<unknown>) {
      // Resumes per account and calendar month (UTC), each one asked or on use.
      await db.schema
        .createTable("account_resumes")
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("period", "text", (c) => c.notNull())
        .addColumn("resumes", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("account_resumes_pk", ["account_id", "period"])
        .execute();
    },
  },
  "0013_account_templates": {
    async up(db: Kysely<unknown>) {
      // Templates accounts build (decision 0198); names are the account's own.
      await db.schema
        .createTable("account_templates")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("published", "integer", (c) => c.notNull().defaultTo(0))
        // The last build that succeeded: its image and what sandboxes started from it get.
        .addColumn("current_build_id", "text")
        .addColumn("image", "text")
        .addColumn("settings", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("account_templates_owner_name")
        .on("account_templates")
        .columns(["owner", "name"])
        .unique()
        .execute();
      await db.schema
        .createTable("template_builds")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("template_id", "text", (c) => c.notNull())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("failed_step", "integer")
        .addColumn("spec", "text", (c) => c.notNull())
        .addColumn("settings", "text", (c) => c.notNull())
        .addColumn("image", "text")
        .addColumn("image_bytes", "bigint")
        .addColumn("replica", "text")
        .addColumn("cancel_requested", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("started_at", "text")
        .addColumn("finished_at", "text")
        .addColumn("heartbeat_at", "text")
        .execute();
      await db.schema
        .createIndex("template_builds_template_id")
        .on("template_builds")
        .column("template_id")
        .execute();
      // Kept after the build ends, until its template is deleted.
      await db.schema
        .createTable("template_build_logs")
        .addColumn("build_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("level", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("template_build_logs_pk", ["build_id", "seq"])
        .execute();
    },
  },
  "0014_audit_log": {
    async up(db: Kysely<unknown>) {
      // Security-relevant events per account (decision 0204): rows are only ever added.
      await db.schema
        .createTable("audit_events")
        .addColumn("seq", "integer", (c) =>
          engine === "postgres"
            ? c.primaryKey().generatedByDefaultAsIdentity()
            : c.primaryKey().autoIncrement(),
        )
        .addColumn("id", "text", (c) => c.notNull().unique())
        .addColumn("account_id", "text", (c) => c.notNull())
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("actor_kind", "text", (c) => c.notNull())
        .addColumn("actor_id", "text")
        .addColumn("actor_name", "text")
        .addColumn("actor_address", "text")
        .addColumn("target_type", "text")
        .addColumn("target_id", "text")
        .addColumn("target_name", "text")
        .addColumn("details", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("audit_events_account_seq")
        .on("audit_events")
        .columns(["account_id", "seq"])
        .execute();
      // The database itself refuses to change or remove a row, whatever code asks.
      if (engine === "postgres") {
        await sql`create function audit_events_append_only() returns trigger language plpgsql as $$
          begin raise exception 'audit_events is append-only'; end $$`.execute(db);
        await sql`create trigger audit_events_no_change before update or delete on audit_events
          for each row execute function audit_events_append_only()`.execute(db);
        await sql`create trigger audit_events_no_truncate before truncate on audit_events
          for each statement execute function audit_events_append_only()`.execute(db);
      } else {
        await sql`create trigger audit_events_no_update before update on audit_events
          begin select raise(abort, 'audit_events is append-only'); end`.execute(db);
        await sql`create trigger audit_events_no_delete before delete on audit_events
          begin select raise(abort, 'audit_events is append-only'); end`.execute(db);
      }
    },
  },
});

class InCodeProvider implements MigrationProvider {
  constructor(private readonly engine: Engine) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations(this.engine);
  }
}

export async function migrate(db: Kysely<unknown>, engine: Engine): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeProvider(engine) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ""} failed: ${String(error)}`, {
      cause: error,
    });
  }
}
