import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createLogger,
  type DeepPartial,
  type Logger,
  loadConfig,
  newId,
  newSecret,
  type PaddockConfig,
} from "@paddock/common";
import { createTestDatabase, type TestEngine } from "@paddock/db";
import { deleteSnapshots, removeLeftoverSnapshotImages } from "@paddock/runtime/testing";
import { type PaddockServer, startServer } from "./server.js";

export interface TestServer {
  server: PaddockServer;
  url: string;
  apiKey: string;
  config: PaddockConfig;
  /** Signs up an account and logs it in; returns its session token. */
  account(email: string, password?: string): Promise<string>;
  /** fetch against the server with the API key set. */
  api(path: string, init?: RequestInit): Promise<Response>;
  dispose(): Promise<void>;
}

/** A real Paddock server on 127.0.0.1 with a random port, a fresh database and its own instance name. */
export async function startTestServer(
  options: {
    engine?: TestEngine;
    config?: DeepPartial<PaddockConfig>;
    controlPlane?: boolean;
    logger?: Logger;
  } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "paddock-server-test-"));
  const database = await createTestDatabase(options.engine ?? "sqlite");
  const apiKey = newSecret("pdk_");
  const config = loadConfig({
    env: {},
    overrides: {
      ...options.config,
      server: {
        host: "127.0.0.1",
        port: 0,
        data_dir: dataDir,
        secret_key: newSecret(),
        instance: newId("test"),
        api_key: apiKey,
        ...options.config?.server,
      },
      database: { url: database.url },
    },
  });
  const server = await startServer({
    ...(options.controlPlane === false ? { controlPlane: false } : {}),
    config,
    logger: options.logger ?? createLogger({ level: process.env.PADDOCK_TEST_LOG_LEVEL ?? "error" }),
    stack: { reaperIntervalMs: 200 },
  });
  return {
    server,
    url: server.url,
    apiKey,
    config,
    async account(email, password = "correct horse battery") {
      const json = { "content-type": "application/json" };
      const body = JSON.stringify({ email, password });
      await fetch(`${server.url}/auth/signup`, { method: "POST", headers: json, body });
      const login = await fetch(`${server.url}/auth/login`, { method: "POST", headers: json, body });
      if (!login.ok) throw new Error(`login as ${email} failed: ${login.status}`);
      return ((await login.json()) as { token: string }).token;
    },
    api: (path, init = {}) =>
      fetch(`${server.url}${path}`, {
        ...init,
        headers: {
          "RUNTIME-API-KEY": apiKey,
          ...(init.body && typeof init.body === "string" ? { "content-type": "application/json" } : {}),
          ...(init.headers as Record<string, string> | undefined),
        },
      }),
    async dispose() {
      await server.stack.pools.stop({ drain: true });
      const { items } = await server.stack.sandboxes.list({ pageSize: 10_000 });
      await Promise.allSettled(items.map((sandbox) => server.stack.sandboxes.delete(sandbox.id)));
      // Volumes are mounted under the data dir: unmounted before it is removed.
      for (const volume of await server.stack.volumes.list())
        await server.stack.volumes.delete(volume.id).catch(() => undefined);
      const capturing = await deleteSnapshots(server.stack);
      await server.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
      await removeLeftoverSnapshotImages(config.server.instance, capturing);
    },
  };
}
