import { AuditLog, createTestDatabase, type DatabaseHandle } from "@paddock/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type TemplateBuild, TemplateRepository } from "./template-repository.js";

describe("a build's end goes to its owner's audit log", () => {
  let handle: DatabaseHandle;
  let drop: () => Promise<void>;
  let repository: TemplateRepository;
  const now = new Date().toISOString();

  /** A template `name` of acct-1 with one build in `status`, whose heartbeat is `heartbeatAt`. */
  async function templateWithBuild(
    name: string,
    status: string,
    heartbeatAt: string,
  ): Promise<TemplateBuild> {
    const settings = { user: "root", workdir: "/", resources: {} };
    await handle.db
      .insertInto("account_templates")
      .values({
        id: `tpl-${name}`,
        owner: "acct-1",
        name,
        description: "",
        published: 0,
        settings: JSON.stringify(settings),
        created_at: now,
        updated_at: now,
      })
      .execute();
    await handle.db
      .insertInto("template_builds")
      .values({
        id: `bld-${name}`,
        template_id: `tpl-${name}`,
        owner: "acct-1",
        status,
        reason: null,
        failed_step: null,
        spec: JSON.stringify({ from: "ubuntu", steps: [] }),
        settings: JSON.stringify(settings),
        image: null,
        image_bytes: null,
        replica: "gone",
        cancel_requested: 0,
        created_at: now,
        started_at: now,
        finished_at: null,
        heartbeat_at: heartbeatAt,
      })
      .execute();
    return {
      id: `bld-${name}`,
      templateId: `tpl-${name}`,
      owner: "acct-1",
      status: "building",
      reason: null,
      failedStep: null,
      spec: { from: "ubuntu", steps: [] },
      settings,
      image: null,
      imageBytes: null,
      createdAt: now,
      startedAt: now,
      finishedAt: null,
    };
  }
  const events = async () =>
    (await new AuditLog(handle.db).list("acct-1", { limit: 50 })).items.map((event) => [
      event.type,
      event.target?.name,
      event.details.build,
    ]);

  beforeAll(async () => {
    const database = await createTestDatabase("sqlite");
    drop = database.drop;
    handle = await database.open();
    repository = new TemplateRepository(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
    await drop?.();
  });

  test("a finished build: succeeded, failed or cancelled, by the system", async () => {
    await repository.finishBuild(await templateWithBuild("good", "building", now), {
      status: "ready",
      image: "paddock/acct-1/good:1",
      imageBytes: 1,
    });
    await repository.finishBuild(await templateWithBuild("bad", "building", now), {
      status: "error",
      reason: "step 1 exited with 2",
    });
    await repository.finishBuild(await templateWithBuild("stopped", "building", now), {
      status: "cancelled",
      reason: "cancelled",
    });
    expect(await events()).toEqual([
      ["template.build_cancelled", "stopped", "bld-stopped"],
      ["template.build_failed", "bad", "bld-bad"],
      ["template.build_succeeded", "good", "bld-good"],
    ]);
  });

  test("a build whose server died is failed once, however many replicas sweep", async () => {
    await templateWithBuild("orphan", "building", "2000-01-01T00:00:00.000Z");
    const before = new Date(Date.now() - 60_000).toISOString();
    expect(await repository.abandonStale(before, before)).toEqual(["bld-orphan"]);
    await repository.abandonStale(before, before);
    const orphaned = (await events()).filter(([, name]) => name === "orphan");
    expect(orphaned).toEqual([["template.build_failed", "orphan", "bld-orphan"]]);
  });
});
