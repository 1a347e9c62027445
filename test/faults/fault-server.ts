import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DatabaseHandle, openDatabase } from "@paddock/db";
import {
  type PaddockProcess,
  serve,
  signedUpSession,
  stop,
  writeServerConfig,
} from "../support/paddock-process.js";
import { removeContainersOf } from "./checks.js";

export interface FaultServerOptions {
  /** Names the data directory (`paddock-fault-<name>-…`). */
  name: string;
  /** The account signed up and logged in for the test. */
  email: string;
  /** Configuration lines beyond writeServerConfig's. */
  config: string[];
  /** The database; SQLite in the data directory by default. */
  databaseUrl?: string;
  /** A tmpfs of this size mounted on the data directory, so the test can fill it. */
  tmpfsSize?: string;
}

/**
 * A fault test's own `paddock serve`, its data directory, an account on it, and, on SQLite, the
 * database opened for checks (a test on another database opens its own when it needs it). The
 * test may kill `running` and `serveAgain()`; `close()` stops it and leaves nothing behind.
 */
export class FaultServer {
  running: PaddockProcess | undefined;
  token = "";
  private checks: DatabaseHandle | undefined;

  private constructor(
    readonly dir: string,
    readonly configFile: string,
    readonly instance: string,
    /** The operator's key, for `/v1`. */
    readonly apiKey: string,
    private readonly tmpfs: boolean,
  ) {}

  static async start(options: FaultServerOptions): Promise<FaultServer> {
    const dir = mkdtempSync(join(tmpdir(), `paddock-fault-${options.name}-`));
    if (options.tmpfsSize)
      execFileSync("mount", ["-t", "tmpfs", "-o", `size=${options.tmpfsSize},mode=0700`, "tmpfs", dir]);
    const sqlite = `sqlite:${join(dir, "paddock.db")}`;
    const config = writeServerConfig(dir, options.databaseUrl ?? sqlite, options.config);
    const server = new FaultServer(dir, config.file, config.instance, config.apiKey, !!options.tmpfsSize);
    try {
      server.token = await signedUpSession((await server.serveAgain()).url, options.email);
      if (!options.databaseUrl) server.checks = await openDatabase(sqlite);
    } catch (error) {
      await server.close();
      throw error;
    }
    return server;
  }

  /** The server's SQLite database, opened for the test's checks. */
  get db(): DatabaseHandle {
    if (!this.checks) throw new Error("only a server on SQLite has its database opened for checks");
    return this.checks;
  }

  /** What the SDK needs to reach the running server as the account. */
  connection(): { baseUrl: string; apiKey: string } {
    return { baseUrl: this.running?.url ?? "", apiKey: this.token };
  }

  /** Starts the server on its configuration and data: at first, and again after the test killed it. */
  async serveAgain(): Promise<PaddockProcess> {
    this.running = await serve(this.configFile);
    return this.running;
  }

  async close(): Promise<void> {
    await stop(this.running?.child, "SIGTERM");
    await this.checks?.close();
    await removeContainersOf(this.instance);
    try {
      if (this.tmpfs) execFileSync("umount", ["--lazy", this.dir]);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
