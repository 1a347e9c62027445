import type { Command } from "commander";

/** `paddock serve` and `paddock runtime serve`. Their modules load only when they run. */
export function registerServerCommands(program: Command): void {
  const serve = (command: Command, controlPlane: boolean) =>
    command
      .option("--config <file>", "TOML configuration (default: $PADDOCK_CONFIG, then ./paddock.toml)")
      .option("--generate-key", "create <data_dir>/api-key when no API key is configured", false)
      .action((options: { config?: string; generateKey: boolean }) =>
        runServerCommand(() => startServing(options, controlPlane)),
      );
  serve(program.command("serve").description("everything: control plane, runtime API, endpoint proxy"), true);
  const runtime = program.command("runtime").description("the runtime API alone");
  serve(runtime.command("serve").description("the /v1 runtime API and endpoint proxy alone"), false);
}

async function startServing(options: { config?: string; generateKey: boolean }, controlPlane: boolean) {
  const { createLogger, loadConfig } = await import("@paddock/common");
  const { startServer } = await import("@paddock/server");
  const config = loadConfig({ file: options.config });
  const logger = createLogger({ level: config.server.log_level });
  const server = await startServer({ config, logger, generateKey: options.generateKey, controlPlane });
  console.log(`Paddock is listening on ${server.url}`);
  console.log(`  runtime API:  ${server.url}/v1  (header RUNTIME-API-KEY)`);
  if (controlPlane) {
    console.log(`  dashboard:    ${server.url}/  (open it in a browser to sign up)`);
    console.log(`  control plane: ${server.url}  (sign up: POST ${server.url}/auth/signup)`);
  }
  if (server.apiKey.source === "generated" || server.apiKey.source === "file") {
    console.log(
      `  API key:      ${server.apiKey.key}${server.apiKey.source === "generated" ? "  (new; saved in the data dir)" : ""}`,
    );
  } else if (server.apiKey.source === "config") {
    console.log("  API key:      the one configured in server.api_key");
  }
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  // Serves until a signal stops it.
  await new Promise<never>(() => {});
}

/**
 * Runs a host-side command (serve, template builds). Their known failures print as one
 * `paddock: <message>` line, anything else with its stack, both with exit status 1.
 */
export async function runServerCommand(run: () => Promise<void>): Promise<void> {
  const { ConfigError } = await import("@paddock/common");
  const { RuntimeStartError, TemplateBuildError } = await import("@paddock/runtime");
  const { StartupError } = await import("@paddock/server");
  try {
    await run();
  } catch (error) {
    if (
      error instanceof ConfigError ||
      error instanceof RuntimeStartError ||
      error instanceof StartupError ||
      error instanceof TemplateBuildError
    ) {
      console.error(`paddock: ${error.message}`);
    } else {
      console.error(error);
    }
    process.exit(1);
  }
}
