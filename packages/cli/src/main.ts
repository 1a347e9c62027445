#!/usr/bin/env node
import { parseArgs } from "node:util";
import { ConfigError, createLogger, loadConfig } from "@paddock/common";
import { RuntimeStartError, TemplateBuildError } from "@paddock/runtime";
import { StartupError, startServer } from "@paddock/server";
import { buildTemplatesCommand } from "./templates-build.js";

const usage = `Usage:
  paddock serve [--config FILE] [--generate-key]           everything: control plane, runtime API, endpoint proxy
  paddock runtime serve [--config FILE] [--generate-key]   the /v1 runtime API and endpoint proxy alone
  paddock templates build [ID...] [--force] [--base IMAGE]  build template images that are missing or stale

Options:
  --config FILE     TOML configuration (default: $PADDOCK_CONFIG, then ./paddock.toml)
  --generate-key    create <data_dir>/api-key when no API key is configured
  --force           rebuild the named templates (all, when none is named) even when current
  --base IMAGE      build templates that have no base template FROM IMAGE (default paddock/base:bookworm)
  -h, --help        this text`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      config: { type: "string" },
      "generate-key": { type: "boolean", default: false },
      force: { type: "boolean", default: false },
      base: { type: "string", default: "paddock/base:bookworm" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const command = positionals.join(" ");
  if (!values.help && positionals[0] === "templates" && positionals[1] === "build") {
    return buildTemplatesCommand(loadConfig({ file: values.config }), positionals.slice(2), {
      force: values.force,
      baseImage: values.base,
    });
  }
  if (values.help || !["serve", "runtime serve"].includes(command)) {
    console.log(usage);
    return values.help ? 0 : 2;
  }
  const config = loadConfig({ file: values.config });
  const logger = createLogger({ level: config.server.log_level });
  const server = await startServer({
    config,
    logger,
    generateKey: values["generate-key"],
    controlPlane: command === "serve",
  });
  console.log(`Paddock is listening on ${server.url}`);
  console.log(`  runtime API:  ${server.url}/v1  (header RUNTIME-API-KEY)`);
  if (command === "serve")
    console.log(`  control plane: ${server.url}  (sign up: POST ${server.url}/auth/signup)`);
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
  return -1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
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
  },
);
