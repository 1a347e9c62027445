import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createLogger,
  type DeepPartial,
  loadConfig,
  newId,
  newSecret,
  type PaddockConfig,
} from "@paddock/common";
import { createTestDatabase, type TestEngine } from "@paddock/db";
import { openRuntimeStack, type RuntimeStack } from "../stack.js";
import { deleteSnapshots, removeLeftoverSnapshotImages } from "./snapshots.js";

export type TestSecureRuntime = "gvisor" | "runc";

export interface TestStack {
  stack: RuntimeStack;
  config: PaddockConfig;
  /** Closes the stack, removes every sandbox it still knows, and drops the database. */
  dispose(): Promise<void>;
  /** Re-opens a stack over the same database and data dir (a server restart). */
  reopen(): Promise<RuntimeStack>;
}

/**
 * A real runtime stack for tests: the local Docker engine, the chosen secure runtime, and a
 * fresh database of the chosen engine in a temp data dir.
 */
export async function openTestStack(
  options: { engine?: TestEngine; secure?: TestSecureRuntime; config?: DeepPartial<PaddockConfig> } = {},
): Promise<TestStack> {
  const dataDir = mkdtempSync(join(tmpdir(), "paddock-test-"));
  const database = await createTestDatabase(options.engine ?? "sqlite");
  const config = loadConfig({
    // Only the variables a test run sets on purpose (an execd image under development, say).
    env: Object.fromEntries(
      Object.entries(process.env)
        .filter(([name]) => name.startsWith("PADDOCK_TEST_CONFIG_"))
        .map(([name, value]) => [name.replace("PADDOCK_TEST_CONFIG_", "PADDOCK_"), value]),
    ),
    overrides: {
      ...options.config,
      server: {
        data_dir: dataDir,
        secret_key: newSecret(),
        instance: newId("test"),
        ...options.config?.server,
      },
      database: { url: database.url },
      secure_runtime: { type: options.secure === "runc" ? "" : "gvisor", ...options.config?.secure_runtime },
    },
  });
  const logger = createLogger({ level: process.env.PADDOCK_TEST_LOG_LEVEL ?? "error", name: "test" });
  let stack = await openRuntimeStack(config, logger, { reaperIntervalMs: 200 });
  return {
    get stack() {
      return stack;
    },
    config,
    async reopen() {
      stack = await openRuntimeStack(config, logger, { reaperIntervalMs: 200 });
      return stack;
    },
    async dispose() {
      await stack.pools.stop({ drain: true });
      const { items } = await stack.sandboxes.list({ pageSize: 10_000 });
      await Promise.allSettled(items.map((sandbox) => stack.sandboxes.delete(sandbox.id)));
      // Volumes are mounted under the data dir: unmounted before it is removed.
      for (const volume of await stack.volumes.list())
        await stack.volumes.delete(volume.id).catch(() => undefined);
      const capturing = await deleteSnapshots(stack);
      await stack.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
      await removeLeftoverSnapshotImages(config.server.instance, capturing);
    },
  };
}

/** The base image every test sandbox uses unless it needs more. */
export const testImage = "paddock/base:bookworm";
