import { EXECD_CODE_INTERPRETER_PREFIX, EXECD_ENVD_PREFIX } from "@paddock/common/contracts";
import type { CodeContexts } from "../code/contexts.js";
import type { Environment } from "../environment.js";
import type { Route } from "../http/router.js";
import type { Metrics } from "../metrics/metrics.js";
import { CodeInterpreter } from "./code-interpreter.js";
import { FileMetadataStore } from "./file-metadata.js";
import { EnvdFilesystem } from "./filesystem.js";
import { envdHttpRoutes } from "./http-routes.js";
import { EnvdProcesses } from "./process.js";

/**
 * E2B's in-sandbox protocol, served by execd so E2B's SDKs work unchanged: envd (Connect-RPC
 * `process.Process` and `filesystem.Filesystem`, plain HTTP for files and health) under
 * `/e2b/envd`, and the code interpreter's `/execute` and `/contexts` under `/e2b/code-interpreter`.
 * The server's gateway maps E2B's `E2b-Sandbox-Port` (49983, 49999) onto these prefixes.
 */
export class Envd {
  private readonly processes: EnvdProcesses;
  private readonly filesystem: EnvdFilesystem;
  readonly routes: Route[];

  constructor(deps: {
    env: Environment;
    code: CodeContexts;
    metrics: Metrics;
    /** Where file metadata is kept; in memory only without one. */
    fileMetadataPath?: string;
  }) {
    const fileMetadata = new FileMetadataStore(deps.fileMetadataPath);
    this.processes = new EnvdProcesses(deps.env);
    this.filesystem = new EnvdFilesystem(fileMetadata);
    this.routes = [
      ...this.processes.routes(EXECD_ENVD_PREFIX),
      ...this.filesystem.routes(EXECD_ENVD_PREFIX),
      ...envdHttpRoutes(EXECD_ENVD_PREFIX, { metrics: deps.metrics, fileMetadata }),
      // The interpreter's contexts are execd's code contexts, which execd closes itself.
      ...new CodeInterpreter(deps.code).routes(EXECD_CODE_INTERPRETER_PREFIX),
    ];
  }

  /** Processes started through envd's Start still running; the interpreter's cells are execd's contexts'. */
  runningCount(): number {
    return this.processes.runningCount();
  }

  closeAll(): void {
    this.processes.closeAll();
    this.filesystem.closeAll();
  }
}
