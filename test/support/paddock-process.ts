import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { newId, newSecret } from "@paddock/common";
import { Paddock } from "paddock";

const root = join(import.meta.dirname, "../..");
const cli = join(root, "packages/cli/dist/main.js");

export interface PaddockProcess {
  child: ChildProcess;
  url: string;
}

/**
 * Writes `paddock.toml` into `dir` for servers under test: data in `dir`, a random port, fresh
 * keys and instance, quiet logs, the database at `databaseUrl`, then `more` lines (keys of
 * `[database]` first, then any further sections). Servers started from one file are replicas of
 * one another. Returns the file, the instance name its sandboxes carry on the engine, and the
 * operator's API key.
 */
export function writeServerConfig(
  dir: string,
  databaseUrl: string,
  more: string[] = [],
): { file: string; instance: string; apiKey: string } {
  const file = join(dir, "paddock.toml");
  const instance = newId("test");
  const apiKey = newSecret("pdk_");
  const lines = [
    "[server]",
    `data_dir = "${dir}"`,
    "port = 0",
    `api_key = "${apiKey}"`,
    `secret_key = "${newSecret()}"`,
    `instance = "${instance}"`,
    'log_level = "error"',
    "[database]",
    `url = "${databaseUrl}"`,
    ...more,
  ];
  writeFileSync(file, `${lines.join("\n")}\n`);
  return { file, instance, apiKey };
}

/** Starts the built `paddock serve` with a config file and resolves with its URL once it listens. */
export async function serve(configFile: string): Promise<PaddockProcess> {
  const child = spawn(process.execPath, [cli, "serve", "--config", configFile], {
    cwd: root,
    env: { PATH: process.env.PATH },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`paddock serve did not start:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += String(chunk);
      const match = /Paddock is listening on (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => reject(new Error(`paddock serve exited with ${code}:\n${output}`)));
  });
  return { child, url };
}

/** Signals the process (SIGTERM: a clean stop; SIGKILL: a crash) and waits until it is gone. */
export async function stop(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

/**
 * Signs an account up on the server at `url` with the tests' password and logs it in there (or
 * at `loginUrl`, another replica); returns its session token.
 */
export async function signedUpSession(url: string, email: string, loginUrl = url): Promise<string> {
  await Paddock.signup(email, "correct horse battery", { baseUrl: url });
  return (await Paddock.login(email, "correct horse battery", { baseUrl: loginUrl })).session.token;
}
