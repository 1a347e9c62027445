import { Errors, PaddockError } from "@paddock/common";
import {
  type AccountTemplatesTable,
  appendAuditEvent,
  type Db,
  lockWithin,
  type TemplateBuildsTable,
} from "@paddock/db";
import type { BuildSpec } from "./build-spec.js";

/** What a sandbox started from an account's template gets, from the template's current build. */
export interface TemplateSettings {
  /** The default user of commands and of the start command. */
  user: string;
  workdir: string;
  startCommand?: string;
  readyCommand?: string;
  /** `cpu` and `memory` a create without its own `resourceLimits` gets. */
  resources: Record<string, string>;
}

export interface AccountTemplate {
  id: string;
  owner: string;
  name: string;
  description: string;
  published: boolean;
  currentBuildId: string | null;
  /** The current build's image; null until a build succeeds. */
  image: string | null;
  settings: TemplateSettings;
  createdAt: string;
  updatedAt: string;
}

export type BuildStatus = "waiting" | "building" | "ready" | "error" | "cancelled";

export interface TemplateBuild {
  id: string;
  templateId: string;
  owner: string;
  status: BuildStatus;
  reason: string | null;
  /** The step (from 1) a failed build stopped at. */
  failedStep: number | null;
  spec: BuildSpec;
  settings: TemplateSettings;
  image: string | null;
  imageBytes: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface BuildLogEntry {
  /** From 0, in order: a reader asks for what follows the last it saw. */
  seq: number;
  at: string;
  level: "info" | "warn" | "error";
  message: string;
}

/** Builds that have not ended. */
const unfinished: BuildStatus[] = ["waiting", "building"];

/**
 * Persistence of accounts' templates, their builds and the builds' logs (decision 0198). A
 * template's name is unique within its account, written under a lock on the account's names; a
 * build's success moves the template to it in the same transaction.
 */
export class TemplateRepository {
  constructor(private readonly db: Db) {}

  /**
   * The account's template of this name, made (without an image) when it has none; `limit` caps
   * how many templates it may hold (`template_limit_reached`).
   */
  async findOrCreate(
    template: Omit<AccountTemplate, "currentBuildId" | "image" | "published">,
    limit: number,
  ): Promise<AccountTemplate> {
    return this.db.transaction().execute(async (trx) => {
      await lockWithin(trx, `templates:${template.owner}`);
      const existing = await trx
        .selectFrom("account_templates")
        .selectAll()
        .where("owner", "=", template.owner)
        .where("name", "=", template.name)
        .executeTakeFirst();
      if (existing) return fromRow(existing);
      const { count } = await trx
        .selectFrom("account_templates")
        .select((eb) => eb.fn.countAll<number | string>().as("count"))
        .where("owner", "=", template.owner)
        .executeTakeFirstOrThrow();
      if (Number(count) >= limit) {
        throw new PaddockError(
          Errors.templateLimitReached,
          `the account holds ${count} templates, as many as its plan allows; delete one first`,
        );
      }
      const row: AccountTemplatesTable = {
        id: template.id,
        owner: template.owner,
        name: template.name,
        description: template.description,
        published: 0,
        current_build_id: null,
        image: null,
        settings: JSON.stringify(template.settings),
        created_at: template.createdAt,
        updated_at: template.updatedAt,
      };
      await trx.insertInto("account_templates").values(row).execute();
      return fromRow(row);
    });
  }

  async find(id: string): Promise<AccountTemplate | undefined> {
    const row = await this.db
      .selectFrom("account_templates")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async findByName(owner: string, name: string): Promise<AccountTemplate | undefined> {
    const row = await this.db
      .selectFrom("account_templates")
      .selectAll()
      .where("owner", "=", owner)
      .where("name", "=", name)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  /** Published templates of this name (names are unique among published ones, so at most one). */
  async findPublished(name: string): Promise<AccountTemplate | undefined> {
    const row = await this.db
      .selectFrom("account_templates")
      .selectAll()
      .where("published", "=", 1)
      .where("name", "=", name)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  /** The account's own templates and every published one, by name. */
  async listVisible(owner: string | null): Promise<AccountTemplate[]> {
    const rows = await this.db
      .selectFrom("account_templates")
      .selectAll()
      .where((eb) =>
        owner === null ? eb("published", "=", 1) : eb.or([eb("owner", "=", owner), eb("published", "=", 1)]),
      )
      .orderBy("name")
      .execute();
    return rows.map(fromRow);
  }

  /** Publishes or withdraws; a second published template of one name is refused (`template_name_taken`). */
  async setPublished(id: string, published: boolean): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await lockWithin(trx, "templates:published");
      const template = await trx
        .selectFrom("account_templates")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      if (!template) throw new PaddockError(Errors.templateNotFound, `no template ${id}`);
      if (published) {
        const other = await trx
          .selectFrom("account_templates")
          .select("id")
          .where("published", "=", 1)
          .where("name", "=", template.name)
          .where("id", "!=", id)
          .executeTakeFirst();
        if (other)
          throw new PaddockError(
            Errors.templateNameTaken,
            `a published template is named ${template.name} already`,
          );
      }
      await trx
        .updateTable("account_templates")
        .set({ published: published ? 1 : 0, updated_at: new Date().toISOString() })
        .where("id", "=", id)
        .execute();
    });
  }

  /** Removes the template with its builds and their logs. */
  async remove(id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const builds = trx.selectFrom("template_builds").select("id").where("template_id", "=", id);
      await trx.deleteFrom("template_build_logs").where("build_id", "in", builds).execute();
      await trx.deleteFrom("template_builds").where("template_id", "=", id).execute();
      await trx.deleteFrom("account_templates").where("id", "=", id).execute();
    });
  }

  /** Writes a new build, unless the account already runs `limit` builds (`template_limit_reached`). */
  async insertBuild(build: TemplateBuild, limit: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await lockWithin(trx, `templates:${build.owner}`);
      const { count } = await trx
        .selectFrom("template_builds")
        .select((eb) => eb.fn.countAll<number | string>().as("count"))
        .where("owner", "=", build.owner)
        .where("status", "in", unfinished)
        .executeTakeFirstOrThrow();
      if (Number(count) >= limit) {
        throw new PaddockError(
          Errors.templateLimitReached,
          `the account runs ${count} builds, as many at once as its plan allows; wait for one to end`,
        );
      }
      await trx.insertInto("template_builds").values(toBuildRow(build)).execute();
    });
  }

  async findBuild(templateId: string, buildId: string): Promise<TemplateBuild | undefined> {
    const row = await this.db
      .selectFrom("template_builds")
      .selectAll()
      .where("template_id", "=", templateId)
      .where("id", "=", buildId)
      .executeTakeFirst();
    return row ? fromBuildRow(row) : undefined;
  }

  async listBuilds(templateId: string): Promise<TemplateBuild[]> {
    const rows = await this.db
      .selectFrom("template_builds")
      .selectAll()
      .where("template_id", "=", templateId)
      .orderBy("created_at", "desc")
      .execute();
    return rows.map(fromBuildRow);
  }

  async hasUnfinishedBuild(templateId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("template_builds")
      .select("id")
      .where("template_id", "=", templateId)
      .where("status", "in", unfinished)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** A build's status by its id alone; undefined when there is no such build. */
  async buildStatus(buildId: string): Promise<BuildStatus | undefined> {
    const row = await this.db
      .selectFrom("template_builds")
      .select("status")
      .where("id", "=", buildId)
      .executeTakeFirst();
    return row?.status as BuildStatus | undefined;
  }

  async markBuilding(buildId: string, replica: string, spec: BuildSpec): Promise<void> {
    const now = new Date().toISOString();
    await this.db
      .updateTable("template_builds")
      .set({ status: "building", replica, spec: JSON.stringify(spec), started_at: now, heartbeat_at: now })
      .where("id", "=", buildId)
      .execute();
  }

  /** Says the build still runs; answers whether a cancel was asked for it. */
  async heartbeat(buildId: string): Promise<boolean> {
    await this.db
      .updateTable("template_builds")
      .set({ heartbeat_at: new Date().toISOString() })
      .where("id", "=", buildId)
      .execute();
    const row = await this.db
      .selectFrom("template_builds")
      .select("cancel_requested")
      .where("id", "=", buildId)
      .executeTakeFirst();
    return Boolean(row?.cancel_requested);
  }

  /** Asks for an unfinished build to stop; false when it had already ended. */
  async requestCancel(buildId: string): Promise<boolean> {
    const result = await this.db
      .updateTable("template_builds")
      .set({ cancel_requested: 1 })
      .where("id", "=", buildId)
      .where("status", "in", unfinished)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Ends a build. A ready build becomes its template's current one in the same transaction, so a
   * template never points at a build that did not succeed.
   */
  async finishBuild(
    build: TemplateBuild,
    outcome:
      | { status: "ready"; image: string; imageBytes: number }
      | { status: "error" | "cancelled"; reason: string; failedStep?: number | undefined },
  ): Promise<void> {
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("template_builds")
        .set(
          outcome.status === "ready"
            ? { status: "ready", image: outcome.image, image_bytes: outcome.imageBytes, finished_at: now }
            : {
                status: outcome.status,
                reason: outcome.reason,
                failed_step: outcome.failedStep ?? null,
                finished_at: now,
              },
        )
        .where("id", "=", build.id)
        .execute();
      if (outcome.status === "ready") {
        await trx
          .updateTable("account_templates")
          .set({
            current_build_id: build.id,
            image: outcome.image,
            settings: JSON.stringify(build.settings),
            updated_at: now,
          })
          .where("id", "=", build.templateId)
          .execute();
      }
      await recordBuildEnd(trx, build, outcome.status, outcome.status === "ready" ? null : outcome.reason);
    });
  }

  /**
   * Ends as errors the builds whose server stopped beating before `before`, and those asked for
   * but never started before `unstartedBefore`; returns their ids.
   */
  async abandonStale(before: string, unstartedBefore: string): Promise<string[]> {
    const stale = await this.db
      .selectFrom("template_builds")
      .select(["id", "owner", "template_id"])
      .where((eb) =>
        eb.or([
          eb.and([eb("status", "=", "building"), eb("heartbeat_at", "<", before)]),
          eb.and([eb("status", "=", "waiting"), eb("created_at", "<", unstartedBefore)]),
        ]),
      )
      .execute();
    if (!stale.length) return [];
    const reason = "the build stopped: its server went away, or its steps never came; build again";
    await this.db.transaction().execute(async (trx) => {
      for (const row of stale) {
        const ended = await trx
          .updateTable("template_builds")
          .set({ status: "error", reason, finished_at: new Date().toISOString() })
          .where("id", "=", row.id)
          .where("status", "in", unfinished)
          .executeTakeFirst();
        // Another replica may have ended it first: only the one that did records it.
        if (Number(ended.numUpdatedRows) > 0)
          await recordBuildEnd(
            trx,
            { id: row.id, owner: row.owner, templateId: row.template_id },
            "error",
            reason,
          );
      }
    });
    return stale.map((row) => row.id);
  }

  async appendLogs(buildId: string, entries: BuildLogEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.db
      .insertInto("template_build_logs")
      .values(entries.map((entry) => ({ build_id: buildId, ...entry })))
      .execute();
  }

  /** Log entries from `from` on (by seq), at most `limit`. */
  async logs(buildId: string, from: number, limit: number): Promise<BuildLogEntry[]> {
    const rows = await this.db
      .selectFrom("template_build_logs")
      .select(["seq", "at", "level", "message"])
      .where("build_id", "=", buildId)
      .where("seq", ">=", from)
      .orderBy("seq")
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...row, level: row.level as BuildLogEntry["level"] }));
  }

  /** Sandboxes not yet deleted that run an image of this template (any of its builds). */
  async sandboxesUsing(templateId: string): Promise<number> {
    const images = this.db
      .selectFrom("template_builds")
      .select("image")
      .where("template_id", "=", templateId);
    const { count } = await this.db
      .selectFrom("sandboxes")
      .select((eb) => eb.fn.countAll<number | string>().as("count"))
      .where("image_uri", "in", images)
      .where("state", "!=", "Terminated")
      .executeTakeFirstOrThrow();
    return Number(count);
  }
}

function fromRow(row: AccountTemplatesTable): AccountTemplate {
  return {
    id: row.id,
    owner: row.owner,
    name: row.name,
    description: row.description,
    published: Boolean(row.published),
    currentBuildId: row.current_build_id,
    image: row.image,
    settings: JSON.parse(row.settings) as TemplateSettings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toBuildRow(build: TemplateBuild): TemplateBuildsTable {
  return {
    id: build.id,
    template_id: build.templateId,
    owner: build.owner,
    status: build.status,
    reason: build.reason,
    failed_step: build.failedStep,
    spec: JSON.stringify(build.spec),
    settings: JSON.stringify(build.settings),
    image: build.image,
    image_bytes: build.imageBytes,
    replica: null,
    cancel_requested: 0,
    created_at: build.createdAt,
    started_at: build.startedAt,
    finished_at: build.finishedAt,
    heartbeat_at: null,
  };
}

function fromBuildRow(row: TemplateBuildsTable): TemplateBuild {
  return {
    id: row.id,
    templateId: row.template_id,
    owner: row.owner,
    status: row.status as BuildStatus,
    reason: row.reason,
    failedStep: row.failed_step,
    spec: JSON.parse(row.spec) as BuildSpec,
    settings: JSON.parse(row.settings) as TemplateSettings,
    image: row.image,
    imageBytes: row.image_bytes === null ? null : Number(row.image_bytes),
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** A build's end in its owner's audit log (decision 0204), written in the transaction that ends it. */
async function recordBuildEnd(
  trx: Db,
  build: { id: string; owner: string; templateId: string },
  status: "ready" | "error" | "cancelled",
  reason: string | null,
): Promise<void> {
  const template = await trx
    .selectFrom("account_templates")
    .select("name")
    .where("id", "=", build.templateId)
    .executeTakeFirst();
  const types = { ready: "succeeded", error: "failed", cancelled: "cancelled" } as const;
  await appendAuditEvent(trx, {
    accountId: build.owner,
    type: `template.build_${types[status]}`,
    actor: { kind: "system" },
    target: { type: "template", id: build.templateId, name: template?.name ?? null },
    details: { build: build.id, ...(reason ? { reason: reason.slice(0, 300) } : {}) },
  });
}
