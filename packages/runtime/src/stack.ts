import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Logger, newSecret, type PaddockConfig } from "@paddock/common";
import { Broadcasts, type DatabaseHandle, Leases, openDatabase } from "@paddock/db";
import { DockerRuntime } from "./docker/docker-runtime.js";
import { KubernetesRuntime } from "./kubernetes/kubernetes-runtime.js";
import { LifecycleLog } from "./lifecycle-log.js";
import { WarmPools } from "./pool.js";
import { LifecycleReaper } from "./reaper.js";
import { Reconciler } from "./reconciler.js";
import type { Runtime } from "./runtime.js";
import { SandboxChanges } from "./sandbox-changes.js";
import { SandboxRepository } from "./sandbox-repository.js";
import { SandboxService } from "./sandbox-service.js";
import { SnapshotRepository } from "./snapshot-repository.js";
import { SnapshotService } from "./snapshot-service.js";
import { BuildFiles } from "./templates/build-files.js";
import { TemplateCatalog } from "./templates/catalog.js";
import { loadTemplates } from "./templates/manifests.js";
import { StepBuilder } from "./templates/step-builder.js";
import { TemplateBuilds } from "./templates/template-builds.js";
import { TemplateRepository } from "./templates/template-repository.js";
import { UsageLedger } from "./usage-ledger.js";
import { UsageMeter } from "./usage-meter.js";
import { VolumeRepository } from "./volume-repository.js";
import { VolumeService } from "./volume-service.js";

export interface RuntimeStack {
  runtime: Runtime;
  sandboxes: SandboxService;
  snapshots: SnapshotService;
  /** The volume registry (decision 0192). */
  volumes: VolumeService;
  pools: WarmPools;
  /** Built-in, accounts' and published templates (decision 0198). */
  templates: TemplateCatalog;
  /** Accounts' template builds. */
  templateBuilds: TemplateBuilds;
  database: DatabaseHandle;
  /** This replica's leases on once-only work; the control plane takes its own from here too. */
  leases: Leases;
  /** Messages to every replica (a revoked credential). */
  broadcasts: Broadcasts;
  /** Server secret from which per-sandbox tokens and signed URLs are derived. */
  secretKey: string;
  close(): Promise<void>;
}

export interface RuntimeStackOptions {
  /** An already-open database (tests, or a server sharing one with the control plane). */
  database?: DatabaseHandle;
  reaperIntervalMs?: number;
}

/**
 * Opens everything the runtime needs, in order: engine (validated), database, leases,
 * reconciliation, then pools, the expiry reaper and the usage meter. Replicas sharing one
 * PostgreSQL each open a stack; once-only work runs where its lease is held. `close()` stops
 * everything in reverse, waits for background work, and hands the leases over.
 */
export async function openRuntimeStack(
  config: PaddockConfig,
  logger: Logger,
  options: RuntimeStackOptions = {},
): Promise<RuntimeStack> {
  const secretKey = resolveSecretKey(config);
  const runtime = createRuntime(config, logger);
  await runtime.start();
  const database = options.database ?? (await openDatabase(databaseUrl(config)));
  // Background work (exits, deletes) that close() waits for. A failure is logged here: left
  // unhandled, one failed write would end the process.
  const pending = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    const settled: Promise<unknown> = work
      .catch((error: unknown) => logger.error({ err: error }, "background sandbox work failed"))
      .finally(() => pending.delete(settled));
    pending.add(settled);
  };
  let closing = false;
  const leases = new Leases(database, config.database.lease_seconds * 1000, logger);
  const broadcasts = new Broadcasts(database, logger);
  const meter = new UsageMeter(
    new UsageLedger(database.db),
    logger,
    config.usage.checkpoint_interval_seconds * 1000,
    leases.lease("usage-checkpoints"),
  );
  const changes = new SandboxChanges(broadcasts, logger);
  const volumes = new VolumeService({
    repository: new VolumeRepository(database.db),
    storage: runtime instanceof DockerRuntime ? runtime.volumeStorage() : undefined,
    config: config.volumes,
    logger,
  });
  const sandboxRepository = new SandboxRepository(
    database.db,
    async (sandboxId, state) => {
      await meter.stateChanged(sandboxId, state);
      // A removed sandbox's row is gone: its volumes are free, and those made to go with it go.
      if (state === "Terminated") await volumes.sandboxRemoved(sandboxId);
    },
    leases.replica,
    changes.publish,
  );
  const snapshotRepository = new SnapshotRepository(database.db, leases.replica);
  const log = new LifecycleLog(database.db);
  const templateRepository = new TemplateRepository(database.db);
  const templates = new TemplateCatalog(loadTemplates(resolve(config.templates.dir)), templateRepository);
  const buildFiles = new BuildFiles(
    join(resolve(config.server.data_dir), "template-files"),
    config.templates.max_build_files_bytes,
  );
  const templateBuilds = new TemplateBuilds({
    repository: templateRepository,
    catalog: templates,
    builder: runtime instanceof DockerRuntime ? new StepBuilder(runtime, buildFiles) : undefined,
    files: buildFiles,
    config,
    logger,
    replica: leases.replica,
  });
  const sandboxes = new SandboxService({
    runtime,
    sandboxes: sandboxRepository,
    snapshots: snapshotRepository,
    log,
    config,
    logger,
    secretKey,
    templates,
    changes,
    volumes,
    track,
  });
  const snapshots = new SnapshotService({
    runtime,
    sandboxes: sandboxRepository,
    snapshots: snapshotRepository,
    logger,
    track,
  });
  runtime.watchExits((sandboxId, exit) => {
    // Exits seen while closing are of sandboxes being drained or left for the next start's
    // reconciler; the database may be gone before their write.
    if (!closing) track(sandboxes.markExited(sandboxId, exit));
  });
  const reconciler = new Reconciler(
    {
      runtime,
      sandboxes: sandboxRepository,
      snapshots: snapshotRepository,
      service: sandboxes,
      log,
      logger,
      liveReplicas: () => leases.liveReplicas(),
    },
    // Taken over from a replica that died: settle what it left at once.
    leases.lease("reconciliation", () => reconciler.runSoon()),
    config.database.lease_seconds * 1000,
  );
  const pools = new WarmPools({
    service: sandboxes,
    repository: sandboxRepository,
    templates,
    config: config.pools,
    logger,
    lease: leases.lease("pool-refills"),
  });
  sandboxes.usePools(pools);
  const reaper = new LifecycleReaper(
    sandboxRepository,
    sandboxes,
    leases.lease("expiry"),
    logger,
    config.runtime.disk_pause_after_seconds * 1000,
    options.reaperIntervalMs,
  );
  // Volumes are mounted again before any sandbox that mounts them can be created or adopted.
  await volumes.remount();
  await leases.start();
  await broadcasts.start();
  await meter.recover((await leases.liveReplicas()).size > 1);
  // Serve only once the engine and the database agree (when this replica reconciles at all).
  reconciler.start();
  await reconciler.settled();
  pools.start();
  reaper.start();
  meter.start();
  templateBuilds.start();
  return {
    runtime,
    sandboxes,
    snapshots,
    volumes,
    pools,
    templates,
    templateBuilds,
    database,
    leases,
    broadcasts,
    secretKey,
    async close() {
      closing = true;
      await templateBuilds.close();
      await pools.stop();
      await reaper.stop();
      await reconciler.stop();
      await Promise.allSettled([...pending]);
      await meter.stop();
      await leases.close();
      await broadcasts.close();
      await runtime.close();
      if (!options.database) await database.close();
    },
  };
}

function createRuntime(config: PaddockConfig, logger: Logger): Runtime {
  return config.runtime.type === "kubernetes"
    ? new KubernetesRuntime(config, logger)
    : new DockerRuntime(config, logger);
}

export function databaseUrl(config: PaddockConfig): string {
  return config.database.url || `sqlite:${join(resolve(config.server.data_dir), "paddock.db")}`;
}

/** `server.secret_key`, else a key generated once into `<data_dir>/secret.key` (mode 0600). */
export function resolveSecretKey(config: PaddockConfig): string {
  if (config.server.secret_key) return config.server.secret_key;
  const dir = resolve(config.server.data_dir);
  const file = join(dir, "secret.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = newSecret();
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
  return key;
}
